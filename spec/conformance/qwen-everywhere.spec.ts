import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import { demoOptionsFor, parseDemoArgs } from '../../examples/demo-options.js';
import { DEFAULT_TRANSCRIPTS, parseWebArgs, runOptionsFor } from '../../examples/web/options.js';
import { agentByName, runAgent, type CliMessage } from '../../lib/index.js';
import { parseAcpArgs } from '../../lib/cli/acp-command.js';
import { checkRunSpec } from '../../lib/fleet/run-spec.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { expectedText, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createQwenEnv, qwenCommand, type QwenEnv } from './qwen-env.js';
import { builtCli } from '../helpers/built-cli.js';

/**
 * `--agent qwen` wherever an agent is chosen by name: the command line's `run`, `chat` and `acp`,
 * a fleet run spec, the demo and the web example. The command line runs the real Qwen Code
 * against the fake model server; the demo and the web example replay its recorded run.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = [await builtCli()];
const REPLAY_SCRIPT = join(ROOT, 'examples/replay-agent/pi-replay.mjs');
const SLOW = 60_000;

let server: FakeModelServer;
let env: QwenEnv;
let scratch: string;
/** An executable that runs the pinned Qwen Code's `cli.js` with this Node (`--executable` takes one program). */
let qwen: string;

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createQwenEnv({ baseUrl: server.openaiBaseUrl });
  scratch = mkdtempSync(join(tmpdir(), 'agent-rx-qwen-everywhere-'));
  const { command, args } = qwenCommand();
  qwen = join(scratch, 'qwen');
  writeFileSync(qwen, `#!/bin/sh\nexec ${[command, ...args].map((part) => `'${part}'`).join(' ')} "$@"\n`);
  chmodSync(qwen, 0o755);
});

afterAll(async () => {
  await server.close();
  await env.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs the command line with `input` on stdin, in the Qwen Code env. */
function cli(args: readonly string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const merged: Record<string, string | undefined> = { ...process.env, ...env.env, NO_COLOR: '1' };
  const childEnv = Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: childEnv }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

const jsonLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .trimEnd()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('--agent qwen everywhere', () => {
  it(
    'agent-rx run --agent qwen: the real Qwen Code, its own flags, the messages as JSON lines',
    async () => {
      const result = await cli(['run', '--json', '--agent', 'qwen', '--executable', qwen, '--cwd', env.cwd, '--model', 'text', '--approval-mode', 'yolo', 'Say hello']);
      expect(result.code).toBe(0);
      const messages = jsonLines(result.stdout) as unknown as CliMessage[];
      expect(messages[0]?.type).toBe('session.started');
      expect(answerOf(messages)).toBe(expectedText('text'));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    },
    SLOW,
  );

  it(
    'agent-rx chat --agent qwen: each line a prompt of one Qwen Code session (ACP), the second sees the first',
    async () => {
      const result = await cli(['chat', '--agent', 'qwen', '--executable', qwen, '--cwd', env.cwd, '--model', 'recall'], 'first question\nsecond question\n');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('User texts in context: 1 ("first question").');
      expect(result.stdout).toContain('User texts in context: 2 ("first question" | "second question").');
    },
    SLOW,
  );

  it('agent-rx acp --agent qwen: a Qwen Code session served over ACP, with its own flags', () => {
    expect(parseAcpArgs(['--agent', 'qwen', '--approval-mode', 'yolo', '--model', 'm'])).toMatchObject({ kind: 'acp', agent: 'qwen', options: { approvalMode: 'yolo', model: 'm' } });
    expect(parseAcpArgs(['--agent', 'qwen', '--approval-mode', 'reckless'])).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('--approval-mode must be one of plan, default, auto-edit, auto, yolo') as unknown });
  });

  it("a fleet run spec { agent: 'qwen', options }: what a caller may choose, and nothing that runs the agent", () => {
    expect(checkRunSpec({ agent: 'qwen', options: { prompt: 'hi', model: 'm', approvalMode: 'yolo', session: 'latest', agentRetry: false } })).toEqual({
      agent: 'qwen',
      options: { prompt: 'hi', model: 'm', approvalMode: 'yolo', session: 'latest', agentRetry: false },
    });
    expect(() => checkRunSpec({ agent: 'qwen', options: { prompt: 'hi', executable: '/bin/sh' } })).toThrow(TypeError);
  });

  it(
    'the demo with --agent qwen replays the recorded Qwen Code run through the replay script, as the agent',
    async () => {
      const request = parseDemoArgs(['--agent', 'qwen'], {});
      expect(request).toMatchObject({ kind: 'run', agent: 'qwen', real: false, model: 'qwen-tool' });
      if (request.kind !== 'run') return;
      const options = { ...demoOptionsFor(request, REPLAY_SCRIPT), env: { PI_REPLAY_SPEED: '0' } };
      const messages = await lastValueFrom(runAgent(agentByName('qwen'), options).pipe(toArray()));
      expect(messages.find((message) => message.type === 'tool.call')).toMatchObject({ name: 'run_shell_command', kind: 'execute', summary: 'echo hello' });
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    },
    SLOW,
  );

  it('the web example with --agent qwen: the recorded Qwen Code run by default, or the real one', () => {
    expect(DEFAULT_TRANSCRIPTS.qwen).toBe('qwen-tool');
    const replay = parseWebArgs(['--agent', 'qwen'], {});
    expect(replay).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: 'qwen', transcript: 'qwen-tool' } });
    if (replay.kind === 'serve') expect(runOptionsFor(replay.agent, 'hi', REPLAY_SCRIPT)).toEqual({ prompt: 'hi', executable: process.execPath, executableArgs: [REPLAY_SCRIPT], model: 'qwen-tool' });
    expect(parseWebArgs(['--agent', 'qwen', '--real', '--model', 'qwen3-coder-plus'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'qwen', model: 'qwen3-coder-plus' } });
  });
});
