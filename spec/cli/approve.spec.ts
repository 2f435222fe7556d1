import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliMessage } from '../../lib/index.js';
import { approveAnswer, approvePolicy, approveQuestion } from '../../lib/cli/approve.js';
import { parseRunArgs } from '../../lib/cli/run-command.js';
import { scenarioMarker } from '../conformance/fake-model-server.js';
import { OPENAI_PROVIDER } from '../conformance/pi-env.js';
import { piWorld } from '../conformance/pi-world.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';
import { builtCli } from '../helpers/built-cli.js';

/**
 * `--approve` on the command line, against the real pi and the fake model server on 127.0.0.1:
 * the model asks for `touch`; a preset decides it; `ask` asks on the terminal (tmux), and what is
 * typed decides whether the file is made.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = [await builtCli()];
const PI = join(ROOT, 'node_modules/.bin/pi');
const TOUCHED = 'touched-by-agent.txt';
const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-approve-'));
const world = piWorld();
const TAG = createProcessTag('AGENT_RX_APPROVE_TEST');
const tmuxSessions: string[] = [];

afterAll(() => {
  for (const name of tmuxSessions) {
    try {
      execFileSync('tmux', ['kill-session', '-t', name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

afterEach(async () => {
  expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
  rmSync(join(world.env.cwd, TOUCHED), { force: true });
});

const runArgs = (...extra: string[]): string[] => ['run', '--executable', PI, '--provider', OPENAI_PROVIDER, '--model', 'recall', '--cwd', world.env.cwd, ...extra];
const touch = `${scenarioMarker('touch_tool')}touch a file`;
const touched = (): boolean => existsSync(join(world.env.cwd, TOUCHED));

function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...process.env, ...world.env.env, ...TAG.env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end();
  });
}

interface Terminal {
  screen(): string;
  type(text: string): void;
  waitFor(check: () => boolean, what: string): Promise<void>;
  exited(): Promise<number>;
  /** Ctrl-D. */
  end(): void;
}

/** The command in a tmux pane: what the screen shows, keys typed, its exit code once it ended. */
function terminal(args: readonly string[]): Terminal {
  const name = `agent-rx-approve-${randomUUID().slice(0, 8)}`;
  tmuxSessions.push(name);
  const exitFile = join(scratch, `${name}.exit`);
  const quote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;
  const assignments = Object.entries({ ...world.env.env, ...TAG.env }).map(([key, value]) => `${key}=${quote(value)}`);
  const command = [...assignments, quote(process.execPath), ...CLI.map(quote), ...args.map(quote)].join(' ');
  execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '160', '-y', '40', 'sleep 600']);
  execFileSync('tmux', ['set-option', '-t', name, 'remain-on-exit', 'on']);
  execFileSync('tmux', ['respawn-pane', '-k', '-t', name, `cd ${quote(ROOT)} && ${command}; echo $? > ${quote(exitFile)}`]);
  const screen = (): string => execFileSync('tmux', ['capture-pane', '-p', '-J', '-t', name], { encoding: 'utf8' });
  const waitUntil = async (check: () => boolean, what: string): Promise<void> => {
    const deadline = performance.now() + 30_000;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const readExit = (): number | null => {
    try {
      return Number(readFileSync(exitFile, 'utf8').trim());
    } catch {
      return null;
    }
  };
  return {
    screen,
    type: (text) => {
      execFileSync('tmux', ['send-keys', '-t', name, '-l', text]);
      execFileSync('tmux', ['send-keys', '-t', name, 'Enter']);
    },
    waitFor: waitUntil,
    end: () => {
      execFileSync('tmux', ['send-keys', '-t', name, 'C-d']);
    },
    exited: async () => {
      await waitUntil(() => readExit() !== null, 'the run to exit');
      return readExit() ?? -1;
    },
  };
}

const inTerminalChat = (): Terminal => terminal(['chat', '--executable', PI, '--provider', OPENAI_PROVIDER, '--model', 'recall', '--cwd', world.env.cwd, '--approve', 'ask', '--no-color']);

describe('--approve: its values', () => {
  it('maps all, reads and none to presets; ask to the asker; refuses anything else, and ask with no terminal', () => {
    const asker = (): 'deny' => 'deny';
    expect(['all', 'reads', 'none', undefined].map((value) => approvePolicy(value, asker))).toEqual(['allow-all', 'allow-reads', 'deny-all', undefined]);
    expect(approvePolicy('ask', asker)).toBe(asker);
    expect(approvePolicy('ask', undefined)).toEqual({ problem: '--approve ask needs a terminal to ask on (stdin and stdout)' });
    expect(parseRunArgs(['--approve', 'maybe', 'hi'])).toEqual({ kind: 'usage-error', message: '--approve must be one of all, reads, none, ask; got maybe' });
    expect(parseRunArgs(['--approve', 'ask', 'hi'])).toEqual({ kind: 'usage-error', message: '--approve ask needs a terminal to ask on (stdin and stdout)' });
  });

  it('reads y, yes, a and always; anything else denies; always only where the agent offers it', () => {
    const offered = { options: ['allow', 'allow-always', 'deny'] as ('allow' | 'allow-always' | 'deny')[] };
    expect(['y', 'Yes', ' a ', 'always', 'n', '', 'sure'].map((line) => approveAnswer(line, offered))).toEqual(['allow', 'allow', 'allow-always', 'allow-always', 'deny', 'deny', 'deny']);
    expect(approveAnswer('a', { options: ['allow', 'deny'] })).toBe('deny');
    expect(approveQuestion({ type: 'permission.requested', requestId: 'r', tool: 'bash', kind: 'execute', title: 'touch x', input: {}, options: ['allow', 'deny'] })).toBe('allow bash (execute): touch x? [y]es, [n]o ');
  });
});

describe('agent-rx run --approve on the real pi', () => {
  it('none: the request and its denial are in the run, the file is not made, the run completes', async () => {
    const result = await cli(runArgs('--approve', 'none', '--json', touch));
    const messages = result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as CliMessage);
    expect(messages.find((message) => message.type === 'permission.requested')).toMatchObject({ tool: 'bash', kind: 'execute', title: 'touch touched-by-agent.txt' });
    expect(messages).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'deny', by: 'policy' }));
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    expect(result.code).toBe(0);
    expect(touched()).toBe(false);
  });

  it('all: the file is made', async () => {
    const result = await cli(runArgs('--approve', 'all', '--json', touch));
    expect(result.stdout).toContain('"by":"policy"');
    expect(result.code).toBe(0);
    expect(touched()).toBe(true);
  });

  /** The run in a tmux pane; what the screen shows; its exit code once it ended. */
  function inTerminal(args: readonly string[]): Terminal {
    return terminal(args);
  }

  it.each([
    ['n', false, 'denied by caller'],
    ['y', true, 'allowed by caller'],
  ])('ask, on a terminal: the question shows the tool and the command; %s decides', async (answer, made, said) => {
    const run = inTerminal(runArgs('--approve', 'ask', '--no-color', touch));
    await run.waitFor(() => run.screen().includes('allow bash (execute): touch touched-by-agent.txt? [y]es, [n]o'), 'the question');
    expect(touched()).toBe(false);
    run.type(answer);
    expect(await run.exited()).toBe(0);
    expect(run.screen()).toContain(said);
    expect(touched()).toBe(made);
  });
});

describe('agent-rx chat --approve ask on the real pi', () => {
  it('asks on the terminal during the turn; n denies (no file), the turn goes on; the next request asks again and y allows', async () => {
    const run = inTerminalChat();
    await run.waitFor(() => run.screen().includes('› '), 'the prompt');
    run.type(touch);
    await run.waitFor(() => run.screen().includes('allow bash (execute): touch touched-by-agent.txt? [y]es, [n]o'), 'the question');
    run.type('n');
    await run.waitFor(() => run.screen().includes('denied by caller'), 'the denial');
    await run.waitFor(() => run.screen().includes('── turn 1'), 'the end of turn 1');
    expect(touched()).toBe(false);
    run.type(touch);
    await run.waitFor(() => (run.screen().match(/allow bash \(execute\)/g) ?? []).length === 2, 'the second question');
    run.type('y');
    await run.waitFor(() => run.screen().includes('── turn 2'), 'the end of turn 2');
    expect(touched()).toBe(true);
    run.end();
    expect(await run.exited()).toBe(0);
  });
});
