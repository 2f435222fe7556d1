import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { inFlagWords } from '../../lib/cli/flag-words.js';
import type { CliMessage, SessionMessage, TerminalFailed, TurnFailed } from '../../lib/index.js';
import { ROOT, startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { builtCli } from '../helpers/built-cli.js';

/**
 * The command line speaks in its flags: a failure's message names `--timeout`, `--idle-timeout`,
 * `--grace` and `--executable` where the library names its options, and a stop by a signal is an
 * interruption. `--json` prints the library's messages unchanged.
 */

const CLI_MAIN = await builtCli();
const REPLAY_AGENT = join(ROOT, 'examples/replay-agent/pi-replay.mjs');
const RPC_REPLAY_AGENT = join(ROOT, 'examples/replay-agent/pi-rpc-replay.mjs');

const failed = (reason: TerminalFailed['reason'], message: string): TerminalFailed => ({
  type: 'terminal.failed',
  reason,
  message,
  exitCode: null,
  signal: null,
  stderr: '',
  stderrTruncatedBytes: 0,
  invalidOutputLines: [],
  invalidOutputLinesOmitted: 0,
});

describe('inFlagWords', () => {
  it.each<[string, TerminalFailed['reason'], string, string]>([
    [
      'the install hint',
      'spawn',
      'pi could not be started: spawn pi ENOENT. Install pi with `npm install -g @mariozechner/pi-coding-agent`, or pass `executable`.',
      'pi could not be started: spawn pi ENOENT. Install pi with `npm install -g @mariozechner/pi-coding-agent`, or pass `--executable <path>`.',
    ],
    ['the run time limit', 'timeout', 'the pi run took longer than timeoutMs (500 ms); it was stopped', 'the pi run took longer than --timeout (500 ms); it was stopped'],
    ['the idle time limit', 'timeout', 'pi printed nothing for idleTimeoutMs (500 ms); it was stopped', 'pi printed nothing for --idle-timeout (500 ms); it was stopped'],
    ['the grace period', 'timeout', 'pi did not end its turn within 2000 ms of the abort (gracePeriodMs); it was stopped', 'pi did not end its turn within 2000 ms of the abort (--grace); it was stopped'],
    ['a stop by the host', 'stopped', 'the host stopped the Claude Code run (stopAllRuns)', 'the Claude Code run was interrupted'],
    ['the schema', 'output-schema', 'the answer does not satisfy outputSchema: n: Invalid input', 'the answer does not satisfy --output-schema: n: Invalid input'],
  ])('puts %s in the command line’s words', (_name, reason, library, command) => {
    expect(inFlagWords(failed(reason, library))).toEqual(failed(reason, command));
  });

  it('translates a turn’s failure as a run’s', () => {
    const turn: TurnFailed = { type: 'turn.failed', turn: 1, reason: 'timeout', message: 'no output for idleTimeoutMs (300 ms): the turn was aborted' };
    expect(inFlagWords<SessionMessage>(turn)).toEqual({ ...turn, message: 'no output for --idle-timeout (300 ms): the turn was aborted' });
  });

  it('leaves every other message, and the words of another reason (the agent’s own text), as they are', () => {
    const agentError = failed('agent-error', 'the model said: set timeoutMs (5 ms) or pass `executable`.');
    expect(inFlagWords(agentError)).toBe(agentError);
    const text: CliMessage = { type: 'assistant', text: 'timeoutMs (1 ms)' };
    expect(inFlagWords(text)).toBe(text);
    const plain = failed('spawn', 'pi could not be started: /x does not exist (ENOENT).');
    expect(inFlagWords(plain)).toBe(plain);
  });
});

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
}

// A command that ends on its own, with `input` on stdin.
function cli(args: readonly string[], env: Readonly<Record<string, string>>, input = ''): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI_MAIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '', ...env } }, (error, stdout) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout });
    });
    child.stdin?.end(input);
  });
}

const lastJson = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? 'null') as Record<string, unknown>;
/** The replay agent, silent for far longer than the limits below. */
const SILENT = { PI_REPLAY_STARTUP_MS: '30000' };

describe('agent-rx run: a time limit in the flag’s words', () => {
  it.each([
    ['--timeout', 'the pi run took longer than --timeout (300 ms); it was stopped', 'the pi run took longer than timeoutMs (300 ms); it was stopped'],
    ['--idle-timeout', 'pi printed nothing for --idle-timeout (300 ms); it was stopped', 'pi printed nothing for idleTimeoutMs (300 ms); it was stopped'],
  ])('%s: the rendering names the flag, --json keeps the library message', async (flag, shown, data) => {
    const human = await cli(['run', flag, '300ms', '--executable', REPLAY_AGENT, 'hi'], SILENT);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`✗ failed · timeout: ${shown}`);
    expect(human.stdout).not.toMatch(/timeoutMs|idleTimeoutMs/);
    const json = await cli(['run', '--json', flag, '300ms', '--executable', REPLAY_AGENT, 'hi'], SILENT);
    expect(json.code).toBe(1);
    expect(lastJson(json.stdout)).toMatchObject({ type: 'terminal.failed', reason: 'timeout', message: data });
  });
});

describe('agent-rx chat: a turn’s idle time limit in the flag’s words', () => {
  it('--idle-timeout: the failed turn names the flag', async () => {
    // The RPC replay agent, 20 times slower: its answer comes seconds after the turn's first events.
    const result = await cli(['chat', '--idle-timeout', '300ms', '--executable', RPC_REPLAY_AGENT], { PI_REPLAY_SPEED: '20', PI_REPLAY_STARTUP_MS: '0' }, 'hi\n');
    expect(result.stdout).toContain('✗ turn 1 failed · timeout: no output for --idle-timeout (300 ms): the turn was aborted');
    expect(result.stdout).not.toContain('idleTimeoutMs');
  }, 30_000);
});

(process.platform === 'linux' ? describe : describe.skip)('agent-rx run interrupted (Linux: /proc scan)', () => {
  const children: TaggedChild[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.cleanUp();
  });

  it('Ctrl-C: the run ends as interrupted, not as a host calling stopAllRuns', async () => {
    // The replay agent, 20 times slower than its recording: it is still answering when Ctrl-C comes.
    const cli = startTaggedNode([CLI_MAIN, 'run', '--executable', REPLAY_AGENT, 'hi'], 'AGENT_RX_CLI_TEST', { PI_REPLAY_SPEED: '20', PI_REPLAY_STARTUP_MS: '0', NO_COLOR: '' });
    children.push(cli);
    await cli.waitForLine(/^session /);
    cli.child.kill('SIGINT');
    const exited = await cli.exitWithin(15_000);
    expect({ exited, survivors: await cli.tag.waitUntilNone(5_000) }).toEqual({ exited: { code: 130, signal: null }, survivors: [] });
    expect(cli.stdout()).toMatch(/⏹ interrupted after .*, stopping the agent/);
    expect(cli.stdout()).toContain('✗ failed · stopped: the pi run was interrupted');
    expect(cli.stdout()).not.toContain('stopAllRuns');
  });
});
