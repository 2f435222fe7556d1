import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import * as acp from '@agentclientprotocol/sdk';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AcpBridge } from '../conformance/acp-bridge.js';
import { builtCli } from '../helpers/built-cli.js';

/**
 * `--executable` on what cannot be started, through the real `agent-rx run`, `chat` and `acp`
 * processes: a file without execute permission says so and how to fix it, a path that does not
 * exist says so, and the install hint is only for an agent looked up on PATH (in the flag's words).
 * The bundled offline agents start as executables.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = [await builtCli()];
const REPLAY_AGENT = join(ROOT, 'examples/replay-agent/pi-replay.mjs');
const RPC_REPLAY_AGENT = join(ROOT, 'examples/replay-agent/pi-rpc-replay.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-executable-'));
/** A folder with no agent in it, for PATH. */
const emptyFolder = mkdtempSync(join(scratch, 'empty-'));
/** Copies of the replay agents stored without execute permission, as a checkout may leave a script. */
const notExecutable = { run: join(scratch, 'pi-replay.mjs'), session: join(scratch, 'pi-rpc-replay.mjs') };
copyFileSync(REPLAY_AGENT, notExecutable.run);
copyFileSync(RPC_REPLAY_AGENT, notExecutable.session);
chmodSync(notExecutable.run, 0o644);
chmodSync(notExecutable.session, 0o644);
const missing = join(scratch, 'no-such-agent');
const INSTALL_PI = 'Install pi with `npm install -g @mariozechner/pi-coding-agent`';

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

// Runs the CLI with `input` piped on stdin, then closed.
function cli(args: readonly string[], env: Readonly<Record<string, string>> = {}, input = ''): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '', PI_REPLAY_SPEED: '0', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

const notExecutableText = (path: string): string => `pi could not be started: ${path} is not executable (EACCES); \`chmod +x ${path}\` makes it so.`;
const missingText = `pi could not be started: ${missing} does not exist (ENOENT).`;

describe('agent-rx run --executable', () => {
  it('on a file that is not executable: says so and how to make it so, without the install hint', async () => {
    const result = await cli(['run', '--executable', notExecutable.run, 'hi']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`✗ failed · spawn: ${notExecutableText(notExecutable.run)}`);
    expect(result.stdout).not.toContain('Install');
  });

  it('on a path that does not exist: says so, without the install hint', async () => {
    const result = await cli(['run', '--executable', missing, 'hi']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`✗ failed · spawn: ${missingText}`);
    expect(result.stdout).not.toContain('Install');
  });

  it('not given, and pi not on PATH: the install hint names the flag; --json keeps the library message', async () => {
    const human = await cli(['run', 'hi'], { PATH: emptyFolder });
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`✗ failed · spawn: pi could not be started: spawn pi ENOENT. ${INSTALL_PI}, or pass \`--executable <path>\`.`);
    const json = await cli(['run', '--json', 'hi'], { PATH: emptyFolder });
    expect(json.code).toBe(1);
    const terminal = JSON.parse(json.stdout.trimEnd().split('\n').at(-1) ?? '') as Record<string, unknown>;
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'spawn', message: `pi could not be started: spawn pi ENOENT. ${INSTALL_PI}, or pass \`executable\`.` });
  });

  it('runs the bundled one-shot replay agent', async () => {
    const result = await cli(['run', '--executable', REPLAY_AGENT, 'hi']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✓ completed');
  });
});

describe('agent-rx chat --executable', () => {
  it('on a file that is not executable: says so and how to make it so, without the install hint', async () => {
    const result = await cli(['chat', '--executable', notExecutable.session], {}, 'hi\n');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`✗ session failed · 0 turns · spawn: ${notExecutableText(notExecutable.session)}`);
    expect(result.stdout).not.toContain('Install');
  });

  it('on a path that does not exist: says so, without the install hint', async () => {
    const result = await cli(['chat', '--executable', missing], {}, 'hi\n');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`✗ session failed · 0 turns · spawn: ${missingText}`);
    expect(result.stdout).not.toContain('Install');
  });

  it('not given, and pi not on PATH: the install hint names the flag', async () => {
    const result = await cli(['chat'], { PATH: emptyFolder }, 'hi\n');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`spawn: pi could not be started: spawn pi ENOENT. ${INSTALL_PI}, or pass \`--executable <path>\`.`);
  });

  it('runs the bundled RPC replay agent: two turns in one session', async () => {
    const result = await cli(['chat', '--executable', RPC_REPLAY_AGENT], {}, 'first\nsecond\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✓ session completed · 2 turns/);
  });
});

describe('agent-rx acp --executable', () => {
  const bridges: AcpBridge[] = [];
  afterEach(async () => {
    for (const bridge of bridges.splice(0)) {
      bridge.disconnect();
      await bridge.exited;
    }
  });

  // What the editor is answered when it asks for a session.
  const newSession = async (args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<unknown> => {
    const bridge = new AcpBridge(args, env);
    bridges.push(bridge);
    await bridge.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    return bridge.agent.request(acp.methods.agent.session.new, { cwd: ROOT, mcpServers: [] }).then(
      () => 'started',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  };

  it('on a file that is not executable: the session is refused with what is wrong and how to fix it', async () => {
    const answer = await newSession(['--executable', notExecutable.session]);
    expect(answer).toContain(notExecutableText(notExecutable.session));
    expect(answer).not.toContain('Install');
  });

  it('on a path that does not exist: the session is refused, saying so', async () => {
    const answer = await newSession(['--executable', missing]);
    expect(answer).toContain(missingText);
    expect(answer).not.toContain('Install');
  });

  it('not given, and pi not on PATH: the install hint names the flag', async () => {
    const answer = await newSession([], { PATH: emptyFolder });
    expect(answer).toContain(`pi could not be started: spawn pi ENOENT. ${INSTALL_PI}, or pass \`--executable <path>\`.`);
  });

  it('serves a session on the bundled RPC replay agent', async () => {
    expect(await newSession(['--executable', RPC_REPLAY_AGENT], { PI_REPLAY_SPEED: '0' })).toBe('started');
  });
});
