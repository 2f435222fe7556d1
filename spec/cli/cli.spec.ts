import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { AGENT_NAMES } from '../../lib/agent-table.js';
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { from, lastValueFrom, toArray } from 'rxjs';
import { CliMessageSchema, RUN_MARKER_ENV, type ProcessItem } from '../../lib/index.js';
import { claudeOutputToMessages, codexOutputToMessages, geminiOutputToMessages, piOutputToMessages } from '../../lib/dialects.js';
import { claudeExecutable } from '../../lib/agents/claude/executable.js';
import { findExecutable } from '../../lib/agents/shared/setup/find-executable.js';
import { parseDuration } from '../../lib/cli/duration.js';
import { parseRunArgs, RUN_USAGE, type RunRequest } from '../../lib/cli/run-command.js';
import { exitCodeFor } from '../../lib/cli/stop-signals.js';
import { createClaudeEnv, type ClaudeEnv } from '../conformance/claude-env.js';
import { startFakeModelServer, type FakeModelServer } from '../conformance/fake-model-server.js';
import { exit } from '../helpers/items.js';
import { fixture, isAlive } from '../helpers/processes.js';
import { startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { builtCli } from '../helpers/built-cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI_MAIN = await builtCli();
const CLI = [CLI_MAIN];
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

// Runs the CLI with `input` piped on stdin (stdin is never a terminal here), then closed.
function cli(args: readonly string[], env: Record<string, string | undefined> = {}, input = ''): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: definedEnv({ ...process.env, NO_COLOR: '', ...env }) }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

// An environment without the variables set to `undefined` (removed).
function definedEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

const lastMessage = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? '') as Record<string, unknown>;

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
    expect(usage.stderr).toContain(`--agent must be one of ${AGENT_NAMES.join(', ')}; got gpt`);
    expect((await cli(['run'])).code).toBe(2);
    expect((await cli(['frobnicate'])).code).toBe(2);
  });

  it('replays Claude Code output with --agent claude', async () => {
    const result = await cli(['run', '--json', '--agent', 'claude', '--replay', fixture('claude/tool-partial.jsonl')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"type":"tool.call"');
  });

  it.each([
    ['claude', 'claude/tool.jsonl', claudeOutputToMessages],
    ['codex', 'codex/tool.jsonl', codexOutputToMessages],
    ['gemini', 'gemini/tool.jsonl', geminiOutputToMessages],
    ['pi', 'pi/tool_call_then_text.jsonl', piOutputToMessages],
  ] as const)('replays a %s recording without --agent: the agent is told by its first lines', async (agent, recording, toMessages) => {
    const result = await cli(['run', '--json', '--replay', fixture(recording)]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = readFileSync(fixture(recording), 'utf8').trimEnd().split('\n').map((text): ProcessItem => ({ kind: 'line', text }));
    expect(result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(await lastValueFrom(from([...lines, exit()]).pipe(toMessages(), toArray())));
    const shown = await cli(['run', '--replay', fixture(recording)]);
    expect(shown.stdout.split('\n')[0]).toBe(`agent-rx · replay of ${basename(recording)} (${agent})`);
  });

  it('--agent overrides what the recording shows; a recording no agent recognises is replayed as pi, and stderr says so', async () => {
    const overridden = await cli(['run', '--json', '--agent', 'pi', '--replay', fixture('claude/tool.jsonl')]);
    expect(overridden.stderr).toBe('');
    expect(lastMessage(overridden.stdout)).toMatchObject({ type: 'terminal.failed', reason: 'missing-terminal', message: expect.stringMatching(/^pi exited without an answer/) as unknown });
    const unknown = join(scratch, 'unknown.jsonl');
    writeFileSync(unknown, '{"hello":"world"}\n');
    const fallback = await cli(['run', '--replay', unknown]);
    expect(fallback.code).toBe(1);
    expect(fallback.stderr).toBe(`agent-rx run: no agent's output recognised in the first lines of ${unknown}; replaying it as pi's (choose the agent with --agent)\n`);
    expect(fallback.stdout.split('\n')[0]).toBe('agent-rx · replay of unknown.jsonl (pi)');
  });

  it('replays Codex output with --agent codex: an API error is an agent-error with its HTTP status', async () => {
    const result = await cli(['run', '--json', '--agent', 'codex', '--replay', fixture('codex/http401.jsonl')]);
    expect(result.code).toBe(1);
    const messages = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string });
    expect(messages.map((message) => message.type)).toEqual(['session.started', 'agent.retry', 'terminal.failed']);
    expect(messages.at(-1)).toMatchObject({ reason: 'agent-error', httpStatus: 401 });
  });

  it('replays Gemini CLI output with --agent gemini: an API error is an agent-error with its HTTP status; a run without a result never completes', async () => {
    const failed = await cli(['run', '--json', '--agent', 'gemini', '--replay', fixture('gemini/http401.jsonl')]);
    expect(failed.code).toBe(1);
    const messages = failed.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string });
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    expect(messages.map((message) => message.type)).toEqual(['session.started', 'terminal.failed']);
    expect(messages.at(-1)).toMatchObject({ reason: 'agent-error', httpStatus: 401, sessionId: '51b66114-1d5b-4b51-b579-d68e12c8f08e' });

    const tool = await cli(['run', '--json', '--agent', 'gemini', '--replay', fixture('gemini/tool.jsonl')]);
    expect(tool.code).toBe(0);
    const printed = tool.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown);
    const lines = readFileSync(fixture('gemini/tool.jsonl'), 'utf8').trimEnd().split('\n').map((text): ProcessItem => ({ kind: 'line', text }));
    expect(printed).toEqual(await lastValueFrom(from([...lines, exit()]).pipe(geminiOutputToMessages(), toArray())));

    const cancelled = await cli(['run', '--json', '--agent', 'gemini', '--replay', fixture('gemini/cancel-sigterm-norelaunch.jsonl')]);
    expect(cancelled.code).toBe(1);
    expect(JSON.parse(cancelled.stdout.trimEnd().split('\n').at(-1) ?? '')).toMatchObject({ type: 'terminal.failed', reason: 'missing-terminal' });

    // --session latest replays as a resumed session.
    const resumed = await cli(['run', '--json', '--agent', 'gemini', '--session', 'latest', '--replay', fixture('gemini/resume-latest.jsonl')]);
    expect(JSON.parse(resumed.stdout.split('\n')[0] ?? '')).toEqual({ type: 'session.resumed', sessionId: '11111111-2222-4333-8444-555555555555', model: 'gemini-2.5-pro' });
  });

  it('a replay file that cannot be read is a usage error, found before anything runs', async () => {
    const missing = join(scratch, 'missing.jsonl');
    const result = await cli(['run', '--json', '--replay', missing]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
    expect(result.stderr).toContain(`agent-rx run: --replay ${missing} cannot be read: ENOENT: no such file or directory`);
    expect(result.stderr).not.toMatch(/ENOENT: ENOENT|Install/);
    const folder = await cli(['run', '--replay', scratch]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain(`agent-rx run: --replay ${scratch} cannot be read: EISDIR`);
  });

  it.each([
    ['run', ['hi']],
    ['chat', []],
  ] as const)('%s: a --cwd that is no folder is a usage error, not a failed spawn', async (command, rest) => {
    const missing = join(scratch, 'no-such-dir');
    const result = await cli([command, '--cwd', missing, ...rest]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
    expect(result.stderr.startsWith(`agent-rx ${command}: --cwd ${missing}: no such directory\n`)).toBe(true);
    expect(result.stderr).not.toContain('Install');
    const file = await cli([command, '--cwd', CLI_MAIN, ...rest]);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain(`--cwd ${CLI_MAIN} is not a directory`);
  });

  it('without a command: the usage on stderr and exit 2; --help: the usage on stdout and exit 0', async () => {
    const none = await cli([]);
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 2, stdout: '' });
    expect(none.stderr).toMatch(/^usage: agent-rx <command>\n/);
    const help = await cli(['--help']);
    expect({ code: help.code, stderr: help.stderr, stdout: help.stdout }).toEqual({ code: 0, stderr: '', stdout: none.stderr });
  });

  it('reads the prompt from stdin for `-`, and when stdin is piped with no prompt argument', async () => {
    const tell = fixture('gemini/tell-run.mjs');
    const stdinOf = (stdout: string): string => {
      const seen = JSON.parse(String(lastMessage(stdout)['stderr'])) as { stdin: { base64: string } };
      return Buffer.from(seen.stdin.base64, 'base64').toString('utf8');
    };
    const dash = await cli(['run', '--json', '--agent', 'gemini', '--executable', tell, '-'], {}, '-p looks like a flag\nand a second line\n');
    expect(stdinOf(dash.stdout)).toBe('-p looks like a flag\nand a second line');
    const piped = await cli(['run', '--json', '--agent', 'gemini', '--executable', tell], {}, 'Piped prompt');
    expect(stdinOf(piped.stdout)).toBe('Piped prompt');
    const shown = await cli(['run', '--executable', REPLAY_AGENT, '--model', 'text'], { PI_REPLAY_SPEED: '0' }, 'Say hello\n');
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n').slice(0, 2)).toEqual(['agent-rx · pi', '> Say hello']);
  });

  it('an empty prompt is a usage error, from stdin too; a replay reads stdin only for `-`', async () => {
    for (const [args, input, message] of [
      [['run'], '', 'the prompt read from stdin is empty'],
      [['run', '-'], ' \n\t\n', 'the prompt read from stdin is empty'],
      [['run', ' '], 'ignored', 'a prompt is needed: as an argument, or - to read it from stdin'],
    ] as const) {
      const result = await cli(args, {}, input);
      expect({ code: result.code, stdout: result.stdout, first: result.stderr.split('\n')[0] }).toEqual({ code: 2, stdout: '', first: `agent-rx run: ${message}` });
    }
    const replay = await cli(['run', '--replay', fixture('pi/text.jsonl')], {}, 'not a prompt');
    expect(replay.code).toBe(0);
    expect(replay.stdout).not.toContain('not a prompt');
    const dash = await cli(['run', '--replay', fixture('pi/text.jsonl'), '-'], {}, 'a prompt from stdin');
    expect(dash.stdout.split('\n').slice(0, 2)).toEqual(['agent-rx · replay of text.jsonl (pi)', '> a prompt from stdin']);
    // Five starts of the command line, each compiling it: minutes on a loaded machine.
  }, 120_000);

  it('runs a real agent process and prints the readable rendering when stdout is not a terminal', async () => {
    const result = await cli(['run', '--executable', REPLAY_AGENT, '--model', 'text', 'Say hello'], { PI_REPLAY_SPEED: '0' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Hello from the fake model. This answer is streamed in many small chunks so you can see deltas.');
    expect(result.stdout).toMatch(/✓ completed · 141 tokens \(123 in, 18 out\) · \d/);
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

  function carriesRunMarker(pid: number): boolean {
    try {
      return readFileSync(`/proc/${pid}/environ`).includes(`${RUN_MARKER_ENV}=`);
    } catch {
      return false;
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

  // What a person reads: no colour codes.
  const plain = (): string => execFileSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' });

  it("replays a Claude Code recording without --agent, stdin a terminal: the Bash call's command, its output, where the time went", async () => {
    const exitFile = join(scratch, 'tty-claude.exit');
    tmuxRun(['run', '--replay', fixture('claude/tool.jsonl')], {}, exitFile);
    await waitFor(() => readExit(exitFile) !== null, 'the replay to end');
    const shown = plain();
    expect(readExit(exitFile)).toBe(0);
    // Claude Code's dialect read it (pi's would end missing-terminal): the heading is checked off a terminal.
    expect(shown).toMatch(/^▸ Bash {2}echo hello$/m);
    expect(shown).toMatch(/^ {2}✓ Bash {2}hello$/m);
    expect(shown).toMatch(/^✓ completed · 96 tokens \(84 in, 12 out, \$0\.0006\) · \d+(\.\d)?m?s · first token \d+(\.\d)?m?s · tools \d+(\.\d)?m?s \(1 call\)$/m);
  });

  it('shows a tool output that came as an update and as the result once', async () => {
    const exitFile = join(scratch, 'tty-once.exit');
    tmuxRun(['run', '--executable', REPLAY_AGENT, '--model', 'tool_call_then_text', 'Run a tool'], { PI_REPLAY_SPEED: '0' }, exitFile);
    await waitFor(() => readExit(exitFile) !== null, 'the run to end');
    const shown = plain();
    expect(readExit(exitFile)).toBe(0);
    // The tool's output line(s), whether streamed by its update or shown by its result.
    const outputLines = shown.split('\n').filter((line) => /^ {2}[✓⋯] bash {2}hello$|^ {4}hello$/.test(line));
    expect(outputLines).toEqual(['    hello']);
    expect(shown).toMatch(/^▸ bash {2}echo hello\n {4}hello\n {2}✓ bash$/m);
    expect(shown).toMatch(/ · tools \d+(\.\d)?m?s \(1 call\)$/m);
  });

  it('Ctrl-C mid-run stops the agent, exits 130, and leaves no process', async () => {
    const exitFile = join(scratch, 'ctrl-c.exit');
    const tag = createProcessTag('AGENT_RX_CLI_TEST');
    tmuxRun(['run', '--executable', REPLAY_AGENT, '--model', 'tool_call_then_text', 'Run a tool'], { PI_REPLAY_SPEED: '3', ...tag.env }, exitFile);
    await waitFor(() => screen().includes('Let me'), 'the first streamed text');
    // The agent's processes carry the run marker; the CLI's own (node, and tsx's esbuild service) do not.
    const agents = tag.processes().map(({ pid }) => pid).filter(carriesRunMarker);
    expect(agents.length).toBeGreaterThan(0);
    execFileSync('tmux', ['send-keys', '-t', session, 'C-c']);
    await waitFor(() => readExit(exitFile) !== null, 'the CLI to exit');
    expect(readExit(exitFile)).toBe(130);
    expect(screen()).toContain('interrupted');
    // Gone before the CLI exits: it awaits the stop sequence.
    expect(agents.filter(isAlive)).toEqual([]);
    // tsx's esbuild service ends by itself once the CLI's node is gone: awaited, not assumed.
    expect(await tag.waitUntilNone(10_000)).toEqual([]);
  });
});

const FAKE_TOOL_AGENT = 'spec/fixtures/fake-agent-tool.mjs';

// SIGTERM (service managers, `timeout`, `docker stop`) and SIGHUP (a closed terminal) stop the run
// as Ctrl-C does. The fake agent's tool runs in its own session, as pi's bash tool does.
(process.platform === 'linux' ? describe : describe.skip)('agent-rx run stopped by a signal (Linux: /proc scan)', () => {
  const children: TaggedChild[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.cleanUp();
  });

  function startCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): TaggedChild {
    const child = startTaggedNode([CLI_MAIN, 'run', ...args], 'AGENT_RX_CLI_TEST', env);
    children.push(child);
    return child;
  }

  // The pids the fake agent reports in its tool.update, once its tool runs.
  async function toolStarted(cli: TaggedChild): Promise<{ toolPid: number; agentPid: number }> {
    const line = await cli.waitForLine(/"type":"tool\.update"/);
    return JSON.parse((JSON.parse(line) as { output: string }).output) as { toolPid: number; agentPid: number };
  }

  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
    ['SIGINT', 130],
  ] as const)('on %s during a tool call it stops the agent and its tool, exits %i, and leaves no process', async (signal, code) => {
    const cli = startCli(['--json', '--executable', FAKE_TOOL_AGENT, 'run a tool']);
    const { toolPid, agentPid } = await toolStarted(cli);
    expect([isAlive(agentPid), isAlive(toolPid)]).toEqual([true, true]);
    cli.child.kill(signal);
    const exited = await cli.exitWithin(15_000);
    const survivors = await cli.tag.waitUntilNone(5_000);
    expect({ exited, survivors }).toEqual({ exited: { code, signal: null }, survivors: [] });
    expect(cli.stderr()).toContain(`agent-rx: ${signal}, stopping the agent`);
    // The run still ends in-band: its last line is its terminal message.
    // In the library's words: --json prints its messages unchanged.
    expect(JSON.parse(cli.stdout().trimEnd().split('\n').at(-1) ?? '')).toMatchObject({ type: 'terminal.failed', reason: 'stopped', message: 'the host stopped the pi run (stopAllRuns)' });
  });

  it('a reader of stdout that goes away (`| head`): the agent is stopped, no stack trace, exit 141 as for SIGPIPE', async () => {
    // The replay agent, 20 times slower than its recording: a delta every second or so.
    const cli = startCli(['--json', '--executable', REPLAY_AGENT, '--model', 'tool_call_then_text', 'hi'], { PI_REPLAY_SPEED: '20', PI_REPLAY_STARTUP_MS: '0' });
    await cli.waitForLine(/"type":"session\.started"/);
    cli.child.stdout.destroy();
    const exited = await cli.exitWithin(30_000);
    const survivors = await cli.tag.waitUntilNone(5_000);
    expect({ exited, survivors, stderr: cli.stderr() }).toEqual({ exited: { code: 141, signal: null }, survivors: [], stderr: '' });
  });

  it('a second signal ends at once, while the first one still waits out the grace period of an agent that ignores it', async () => {
    const cli = startCli(['--json', '--grace', '20s', '--executable', FAKE_TOOL_AGENT, 'run a tool'], { FAKE_AGENT_IGNORE_SIGNALS: '1' });
    await toolStarted(cli);
    cli.child.kill('SIGTERM');
    await cli.waitForStderr('stopping the agent');
    expect(await cli.exitWithin(300)).toBe('still running');
    const startedAt = performance.now();
    cli.child.kill('SIGINT');
    const exited = await cli.exitWithin(15_000);
    const tookMs = performance.now() - startedAt;
    const survivors = await cli.tag.waitUntilNone(10_000);
    expect({ exited, survivors, quick: tookMs < 5_000 }).toEqual({ exited: { code: 130, signal: null }, survivors: [], quick: true });
  });
});

describe('agent-rx run: durations and time limits', () => {
  const run = (argv: readonly string[]): Extract<RunRequest, { kind: 'run' }> => {
    const request = parseRunArgs(argv);
    if (request.kind !== 'run') throw new Error(`not a run: ${JSON.stringify(request)}`);
    return request;
  };
  const usageError = (argv: readonly string[]): string => {
    const request = parseRunArgs(argv);
    if (request.kind !== 'usage-error') throw new Error(`not a usage error: ${JSON.stringify(request)}`);
    return request.message;
  };

  it('reads a duration as ms, or with a unit ms, s, m or h', () => {
    expect(['1500', '0', '250ms', '90s', '1.5s', '.5s', '10m', '2h'].map(parseDuration)).toEqual([1500, 0, 250, 90_000, 1500, 500, 600_000, 7_200_000]);
    expect(['', 's', '-5', '+5', '5x', '5 s', '1e3', 'Infinity', '5S', '1.2.3'].map(parseDuration)).toEqual(Array(10).fill(null));
  });

  it('maps --timeout, --idle-timeout and --grace to timeoutMs, idleTimeoutMs and gracePeriodMs', () => {
    expect(run(['--timeout', '10m', '--idle-timeout=90s', '--grace', '500', 'hi']).limits).toEqual({
      timeoutMs: 600_000,
      idleTimeoutMs: 90_000,
      gracePeriodMs: 500,
    });
    expect(run(['--grace', '0', 'hi']).limits).toEqual({ gracePeriodMs: 0 });
    expect(run(['--grace', '2s', '--agent', 'claude', 'hi']).limits).toEqual({ gracePeriodMs: 2000 });
    expect(run(['--grace', '2s', '--agent', 'codex', 'hi']).limits).toEqual({ gracePeriodMs: 2000 });
    expect(run(['hi']).limits).toEqual({});
  });

  it('answers a bad duration, a zero time limit or a negative value with a usage error that names the flag', () => {
    expect(usageError(['--timeout', 'soon', 'hi'])).toBe("--timeout must be a duration > 0 such as 5000 (ms), 90s, 10m or 2h; got 'soon'");
    expect(usageError(['--idle-timeout', '0', 'hi'])).toBe("--idle-timeout must be a duration > 0 such as 5000 (ms), 90s, 10m or 2h; got '0'");
    expect(usageError(['--timeout', '30d', 'hi'])).toContain('--timeout must be a duration > 0');
    expect(usageError(['--timeout', '1000h', 'hi'])).toBe("--timeout must be at most 2147483647 ms (about 24 days); got '1000h'");
    // parseArgs alone calls `--grace -5` ambiguous; the value reaches the validator instead.
    expect(usageError(['--grace', '-5', 'hi'])).toBe("--grace must be a duration such as 5000 (ms), 90s, 10m or 2h; got '-5'");
    expect(usageError(['--timeout', '-1s', 'hi'])).toContain("--timeout must be a duration > 0 such as 5000 (ms), 90s, 10m or 2h; got '-1s'");
    expect(usageError(['--grace=-5', 'hi'])).toContain("got '-5'");
    // After `--`, everything is prompt.
    expect(run(['--', '--grace', '-5']).prompt).toBe('--grace -5');
  });

  it('exits 2 with the message and where the help is for a bad duration', async () => {
    const result = await cli(['run', '--grace', '-5', 'hi']);
    expect(result).toEqual({ code: 2, stdout: '', stderr: "agent-rx run: --grace must be a duration such as 5000 (ms), 90s, 10m or 2h; got '-5'\nsee 'agent-rx run --help'\n" });
  });

  it.each([
    [['run', '--grace', '-abc', 'hi'], "agent-rx run: --grace must be a duration such as 5000 (ms), 90s, 10m or 2h; got '-abc'"],
    [['run', '--timeout', '-h', 'hi'], "agent-rx run: --timeout must be a duration > 0 such as 5000 (ms), 90s, 10m or 2h; got '-h'"],
    [['run', '--idle-timeout', '-Infinity', 'hi'], "agent-rx run: --idle-timeout must be a duration > 0 such as 5000 (ms), 90s, 10m or 2h; got '-Infinity'"],
    [['chat', '--idle-timeout', '-5'], "agent-rx chat: --idle-timeout must be a duration > 0 such as 5000 (ms), 90s, 10m or 2h; got '-5'"],
    [['chat', '--grace', '-1s'], "agent-rx chat: --grace must be a duration such as 5000 (ms), 90s, 10m or 2h; got '-1s'"],
    [['worker', '--redis', 'redis://127.0.0.1:1', '--drain', '-5'], "agent-rx worker: --drain must be a duration such as 500ms, 30s or 2m; got '-5'"],
    [['worker', '--redis', 'redis://127.0.0.1:1', '--heartbeat-ttl', '-1s'], "agent-rx worker: --heartbeat-ttl must be a duration"],
    [['worker', '--redis', 'redis://127.0.0.1:1', '--concurrency', '-1'], 'agent-rx worker: --concurrency must be an integer >= 1; got -1'],
  ])('%j: a value starting with a dash reaches the flag\'s own check (exit 2), not parseArgs\'s "ambiguous"', async (args, message) => {
    const result = await cli(args);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toContain(message);
    expect(result.stderr).not.toContain('ambiguous');
  });

  it('a flag given where a value is due stays a flag: the flag before it needs a value', () => {
    expect(usageError(['--grace', '--json', 'hi'])).toBe('--grace needs a value (one that starts with a dash is written --grace=<value>)');
  });

  it('exits as a shell reports a command ended by the signal', () => {
    expect([exitCodeFor('SIGINT'), exitCodeFor('SIGTERM'), exitCodeFor('SIGHUP')]).toEqual([130, 143, 129]);
  });
});


describe('agent-rx run --agent codex', () => {
  const usageError = (argv: readonly string[]): string => {
    const request = parseRunArgs(argv);
    if (request.kind !== 'usage-error') throw new Error(`not a usage error: ${JSON.stringify(request)}`);
    return request.message;
  };

  it('takes --sandbox, --session last or an id, and --provider', () => {
    for (const argv of [['--sandbox', 'read-only'], ['--session', 'last'], ['--session', '0199-thread'], ['--provider', 'proxy', '--no-agent-retry']]) {
      expect(parseRunArgs(['--agent', 'codex', ...argv, 'hi'])).toMatchObject({ kind: 'run', agent: 'codex' });
    }
  });

  it("refuses what runCodex refuses, as usage errors: an unknown sandbox, --no-agent-retry without the custom provider's id", () => {
    expect(usageError(['--agent', 'codex', '--sandbox', 'none', 'hi'])).toContain('sandbox must be one of read-only, workspace-write, danger-full-access');
    expect(usageError(['--agent', 'codex', '--no-agent-retry', 'hi'])).toContain('agentRetry: false needs `provider`');
  });
});

describe('agent-rx run --agent gemini', () => {
  const usageError = (argv: readonly string[]): string => {
    const request = parseRunArgs(argv);
    if (request.kind !== 'usage-error') throw new Error(`not a usage error: ${JSON.stringify(request)}`);
    return request.message;
  };

  it('the usage lists gemini, its sessions and --approval-mode', () => {
    expect(RUN_USAGE).toContain(`--agent <${AGENT_NAMES.join('|')}>`);
    expect(RUN_USAGE).toContain('--approval-mode <mode>  gemini: default, auto_edit, yolo, plan');
    expect(RUN_USAGE).toMatch(/gemini: new, latest or a\s+session id\s+\(or index\) to resume/);
  });

  it('takes --approval-mode, --session latest or an index, --model and --no-agent-retry', () => {
    for (const argv of [['--approval-mode', 'yolo'], ['--approval-mode', 'plan'], ['--session', 'latest'], ['--session', '3'], ['--model', 'gemini-2.5-flash'], ['--no-agent-retry']]) {
      expect(parseRunArgs(['--agent', 'gemini', ...argv, 'hi'])).toMatchObject({ kind: 'run', agent: 'gemini', prompt: 'hi' });
    }
  });

  it('refuses what runGemini refuses, as usage errors: an unknown approval mode', () => {
    expect(usageError(['--agent', 'gemini', '--approval-mode', 'always', 'hi'])).toContain("--approval-mode must be one of default, auto_edit, yolo, plan; got 'always'");
    expect(usageError(['--agent', 'gemini', '--approval-mode', '', 'hi'])).toContain('--approval-mode must be one of');
  });

  it('runs the executable it is given as Gemini CLI: the options as its arguments, the prompt on stdin', async () => {
    const result = await cli(['run', '--json', '--agent', 'gemini', '--executable', fixture('gemini/tell-run.mjs'), '--approval-mode', 'yolo', '--session', 'latest', '--model', 'm', '--', '-p looks like a flag']);
    expect(result.code).toBe(1);
    const terminal = JSON.parse(result.stdout.trimEnd().split('\n').at(-1) ?? '') as { reason: string; stderr: string };
    expect(terminal.reason).toBe('exit');
    const seen = JSON.parse(terminal.stderr) as { args: string[]; stdin: { base64: string }; env: Record<string, string | null> };
    expect(seen.args).toEqual(['--output-format', 'stream-json', '--model=m', '--approval-mode=yolo', '--skip-trust', '--resume=latest']);
    expect(Buffer.from(seen.stdin.base64, 'base64').toString('utf8')).toBe('-p looks like a flag');
    expect(seen.env['GEMINI_CLI_NO_RELAUNCH']).toBe('true');
    expect(seen.env['GEMINI_CLI_HOME']).toBeNull();
  });

  it('runs the replay agent as Gemini CLI and renders its tool call and usage', async () => {
    const result = await cli(['run', '--agent', 'gemini', '--executable', REPLAY_AGENT, '--model', 'gemini-tool', 'Say hello'], { PI_REPLAY_SPEED: '0' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('I will run `echo hello`.');
    expect(result.stdout).toContain('run_shell_command');
    expect(result.stdout).toMatch(/✓ completed · 167 tokens \(140 in, 27 out\) · \d/);
  });
});

// Claude Code's bin in node_modules/.bin is a stub where its install script did not run: without
// --executable the command line starts the platform package's binary (findExecutable).
const claudeFound = findExecutable(claudeExecutable, { PATH: '' });
(claudeFound.foundBy === 'package' ? describe : describe.skip)('agent-rx run --agent claude without --executable', () => {
  let server: FakeModelServer;
  let claudeEnv: ClaudeEnv;
  beforeAll(async () => {
    server = await startFakeModelServer();
    claudeEnv = createClaudeEnv({ baseUrl: server.baseUrl });
  });
  afterAll(async () => {
    await server.close();
    await claudeEnv.cleanup();
  });

  it('runs the native binary of the installed package, with the stub first on PATH', async () => {
    const path = `${join(ROOT, 'node_modules/.bin')}:${process.env['PATH'] ?? ''}`;
    const result = await cli(['run', '--json', '--agent', 'claude', '--model', 'text', '--cwd', claudeEnv.cwd, '--timeout', '60s', 'Scenario text please'], { ...claudeEnv.env, PATH: path });
    expect(lastMessage(result.stdout)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    expect(result.code).toBe(0);
  }, 90_000);
});
