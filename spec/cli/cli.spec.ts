import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { from, lastValueFrom, toArray } from 'rxjs';
import { CliMessageSchema, piOutputToMessages, type ProcessItem } from '../../lib/index.js';
import { exit } from '../helpers/items.js';
import { fixture, isAlive } from '../helpers/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = ['--import', 'tsx', join(ROOT, 'lib/cli/main.ts')];
const REPLAY_AGENT = join(ROOT, 'examples/replay-agent/pi-replay.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-cli-'));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

describe('agent-rx run --json', () => {
  it('prints one valid CliMessage per line, the same as the pipeline gives, and exits 0 on completion', async () => {
    const transcript = fixture('pi/tool_call_then_text.jsonl');
    const result = await cli(['run', '--json', '--replay', transcript]);
    expect(result.code).toBe(0);
    const printed = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown);
    for (const message of printed) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    const lines = readFileSync(transcript, 'utf8').trimEnd().split('\n').map((text): ProcessItem => ({ kind: 'line', text }));
    expect(printed).toEqual(await lastValueFrom(from([...lines, exit()]).pipe(piOutputToMessages(), toArray())));
  });

  it('exits 1 when the run failed, 2 on a usage error', async () => {
    const failed = await cli(['run', '--json', '--replay', fixture('pi/http401.jsonl')]);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout.trimEnd().split('\n').at(-1) ?? '')).toMatchObject({ type: 'terminal.failed', reason: 'agent-error' });
    const usage = await cli(['run', '--agent', 'gpt', 'hi']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--agent must be one of pi, claude');
    expect((await cli(['run'])).code).toBe(2);
    expect((await cli(['frobnicate'])).code).toBe(2);
  });

  it('replays Claude Code output with --agent claude', async () => {
    const result = await cli(['run', '--json', '--agent', 'claude', '--replay', fixture('claude/tool-partial.jsonl')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"type":"tool.call"');
  });

  it('reports an unreadable replay file as a failed run', async () => {
    const result = await cli(['run', '--json', '--replay', join(scratch, 'missing.jsonl')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('cannot read');
  });

  it('runs a real agent process and prints the readable rendering when stdout is not a terminal', async () => {
    const result = await cli(['run', '--executable', REPLAY_AGENT, '--model', 'text', 'Say hello'], { PI_REPLAY_SPEED: '0' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Hello from the fake model. This answer is streamed in many small chunks so you can see deltas.');
    expect(result.stdout).toMatch(/✓ completed · stop · 141 tokens \(123 in, 18 out\) · \d/);
    expect(result.stdout).not.toContain('\u001b[');
  });
});

describe('agent-rx run in a terminal (tmux)', () => {
  const sessions: string[] = [];
  let session = '';
  afterAll(() => {
    for (const name of sessions) {
      try {
        execFileSync('tmux', ['kill-session', '-t', name], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
  });

  // A detached tmux session whose pane stays on screen after the command ends.
  function tmuxRun(args: readonly string[], env: Record<string, string>, exitFile: string): void {
    session = `agent-rx-test-${randomUUID().slice(0, 8)}`;
    sessions.push(session);
    const quote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;
    const assignments = Object.entries(env).map(([key, value]) => `${key}=${quote(value)}`);
    const command = [...assignments, quote(process.execPath), ...CLI.map(quote), ...args.map(quote)].join(' ');
    const shell = `cd ${quote(ROOT)} && env -u NO_COLOR ${command}; echo $? > ${quote(exitFile)}`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '120', '-y', '40', 'sleep 600']);
    execFileSync('tmux', ['set-option', '-t', session, 'remain-on-exit', 'on']);
    execFileSync('tmux', ['respawn-pane', '-k', '-t', session, shell]);
  }

  const screen = (): string => execFileSync('tmux', ['capture-pane', '-p', '-e', '-t', session], { encoding: 'utf8' });

  // The screen is not an event source: look at it until it shows what is expected.
  async function waitFor(check: () => boolean, what: string): Promise<void> {
    const deadline = performance.now() + 20_000;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  function readExit(file: string): number | null {
    try {
      return Number(readFileSync(file, 'utf8').trim());
    } catch {
      return null;
    }
  }

  it('streams the answer inline with colours and ends with a status line', async () => {
    const exitFile = join(scratch, 'tty.exit');
    tmuxRun(['run', '--executable', REPLAY_AGENT, '--model', 'thinking_text', 'Think, then answer'], { PI_REPLAY_SPEED: '0.3' }, exitFile);
    await waitFor(() => readExit(exitFile) !== null, 'the run to end');
    const shown = screen();
    expect(readExit(exitFile)).toBe(0);
    expect(shown).toContain('Thought about it. Here is the answer: 42.');
    expect(shown).toContain('\u001b[2mthinking'); // the thought, dimmed
    expect(shown).toMatch(/✓ completed/);
    expect(shown).toContain('\u001b[32m'); // green status
  });

  it('Ctrl-C mid-run stops the agent, exits 130, and leaves no process', async () => {
    const exitFile = join(scratch, 'ctrl-c.exit');
    const tag = `AGENT_RX_CLI_TEST=${randomUUID()}`;
    const [tagName, tagValue] = tag.split('=') as [string, string];
    tmuxRun(['run', '--executable', REPLAY_AGENT, '--model', 'tool_call_then_text', 'Run a tool'], { PI_REPLAY_SPEED: '3', [tagName]: tagValue }, exitFile);
    await waitFor(() => screen().includes('Let me'), 'the first streamed text');
    const agents = tagged(tag);
    expect(agents.length).toBeGreaterThan(0);
    execFileSync('tmux', ['send-keys', '-t', session, 'C-c']);
    await waitFor(() => readExit(exitFile) !== null, 'the CLI to exit');
    expect(readExit(exitFile)).toBe(130);
    expect(screen()).toContain('interrupted');
    expect(agents.filter(isAlive)).toEqual([]);
    expect(tagged(tag)).toEqual([]);
  });
});

/** Live processes whose environment holds `tag`. */
function tagged(tag: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(`${tag}\0`) && isAlive(Number(name))) found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

