import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { lastValueFrom, share, toArray } from 'rxjs';
import { parseRunArgs } from '../../lib/cli/run-command.js';
import { exitCodeFor } from '../../lib/cli/stop-signals.js';
import { CliMessageSchema, type CliMessage } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { unusedPort } from '../helpers/redis-server.js';
import { ROOT, startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { FLEET_AGENT, agentPids, fleetWorld, gone } from '../fleet/fleet-world.js';
import { builtCli } from '../helpers/built-cli.js';

const CLI_MAIN = await builtCli();
const world = fleetWorld();
const pace = { PI_REPLAY_SPEED: '0.2', NO_COLOR: '' };

function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_MAIN, ...args], { cwd: ROOT, env: { ...process.env, ...pace } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

const firstLine = (text: string): string => text.split('\n')[0] ?? '';

const messagesOf = (stdout: string): CliMessage[] =>
  stdout
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => CliMessageSchema.parse(JSON.parse(line)));

/** `agent-rx worker` as its own process, its agent pi the fleet's test agent. */
async function startCliWorker(name: string, extra: readonly string[] = []): Promise<TaggedChild> {
  const child = startTaggedNode([CLI_MAIN, 'worker', '--redis', world.redis().url, '--executable', `pi=${FLEET_AGENT}`, '--name', name, '--heartbeat', '200ms', '--heartbeat-ttl', '1s', '--json', ...extra], 'AGENT_RX_FLEET_CLI', pace);
  await child.waitForLine(/"type":"ready"/);
  return child;
}

describe('agent-rx worker and agent-rx run --fleet', () => {
  it('runs a prompt on a worker: the same messages as the same run here, exit 0; the worker says what it did', async () => {
    const worker = await startCliWorker('cli-1');
    try {
      const [fleet, local] = await Promise.all([
        cli(['run', '--fleet', world.redis().url, '--json', '--model', 'text', 'hi']),
        cli(['run', '--executable', FLEET_AGENT, '--json', '--model', 'text', 'hi']),
      ]);
      expect(fleet.code).toBe(0);
      // The same messages, each agent's process where it ran: the worker's pid and the local one differ.
      const [fleetStarted, ...fleetRest] = messagesOf(fleet.stdout);
      const [localStarted, ...localRest] = messagesOf(local.stdout);
      expect(fleetRest).toEqual(localRest);
      expect(fleetStarted).toEqual({ ...localStarted, pid: expect.any(Number), processGroup: expect.any(Number) });
      const started = await worker.waitForLine(/"type":"started"/);
      expect(JSON.parse(started)).toMatchObject({ type: 'started', agent: 'pi' });
      await worker.waitForLine(/"type":"ended"/);
    } finally {
      worker.cleanUp();
    }
  });

  it('Ctrl-C of run --fleet cancels the run on its worker (the agent and its tool gone) and ends it in-band, stopped', async () => {
    const worker = await startCliWorker('cli-2');
    const run = startTaggedNode([CLI_MAIN, 'run', '--fleet', world.redis().url, '--json', '--model', 'fake_tool', 'hi'], 'AGENT_RX_FLEET_CLI_RUN', pace);
    try {
      const update = await run.waitForLine(/"type":"tool.update"/);
      const { output } = JSON.parse(update) as { output: string };
      const { agentPid, toolPid } = JSON.parse(output) as { agentPid: number; toolPid: number };
      run.child.kill('SIGINT');
      expect(await run.exitWithin(15_000)).toEqual({ code: exitCodeFor('SIGINT'), signal: null });
      expect(messagesOf(run.stdout()).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'stopped' });
      await gone([agentPid, toolPid]);
      const ended = await worker.waitForLine(/"type":"ended"/);
      expect(JSON.parse(ended)).toMatchObject({ stopped: 'cancel' });
    } finally {
      run.cleanUp();
      worker.cleanUp();
    }
  });

  it('drains on SIGTERM: the running run ends lost after --drain, its agent gone, and the worker exits 0', async () => {
    const worker = await startCliWorker('cli-3', ['--drain', '500ms']);
    const run = startTaggedNode([CLI_MAIN, 'run', '--fleet', world.redis().url, '--json', '--model', 'fake_tool', 'hi'], 'AGENT_RX_FLEET_CLI_RUN', pace);
    try {
      const update = await run.waitForLine(/"type":"tool.update"/);
      const { agentPid, toolPid } = JSON.parse((JSON.parse(update) as { output: string }).output) as { agentPid: number; toolPid: number };
      worker.child.kill('SIGTERM');
      expect(await worker.exitWithin(15_000)).toEqual({ code: 0, signal: null });
      expect(worker.stdout()).toContain('"type":"closed"');
      expect(isAlive(agentPid) || isAlive(toolPid)).toBe(false);
      expect(await run.exitWithin(15_000)).toEqual({ code: 1, signal: null });
      expect(messagesOf(run.stdout()).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'lost', message: expect.stringContaining('cli-3 shut down') });
    } finally {
      run.cleanUp();
      worker.cleanUp();
    }
  });

  it('refuses, as usage errors, what is the worker\u2019s to choose, and a bad Redis URL', async () => {
    for (const args of [
      ['--executable', '/bin/pi'],
      ['--grace', '1s'],
      ['--replay', 'x.jsonl'],
    ]) {
      const request = parseRunArgs(['--fleet', 'redis://127.0.0.1:1', ...args, 'hi']);
      expect(request).toMatchObject({ kind: 'usage-error', message: expect.stringContaining("is the worker's to choose") });
    }
    const worker = await cli(['worker', '--redis', 'http://example']);
    expect(worker.code).toBe(2);
    expect(firstLine(worker.stderr)).toBe("agent-rx worker: --redis must be a redis://, rediss:// or unix:// URL; got 'http://example'");
    const usage = await cli(['worker']);
    expect(usage.code).toBe(2);
  });

  it('run --fleet at a Redis that never answers: one line, the run failed setup with what failed, where and why, exit 1', async () => {
    const port = String(await unusedPort());
    const result = await cli(['run', '--fleet', `redis://127.0.0.1:${port}`, '--json', 'hi']);
    expect({ code: result.code, stderr: result.stderr, lines: result.stdout.trimEnd().split('\n').length }).toEqual({ code: 1, stderr: '', lines: 1 });
    expect(messagesOf(result.stdout)).toEqual([
      expect.objectContaining({ type: 'terminal.failed', reason: 'setup', message: `the fleet's Redis at 127.0.0.1:${port} could not be reached: connect ECONNREFUSED 127.0.0.1:${port}` }),
    ]);
  }, 60_000);

  it('refuses a --fleet or --redis that is not a Redis URL as a usage error: exit 2, one line naming the flag, nothing printed or run before it', async () => {
    const run = await cli(['run', '--fleet', 'notaurl', 'hi']);
    expect({ code: run.code, stdout: run.stdout, first: firstLine(run.stderr) }).toEqual({ code: 2, stdout: '', first: "agent-rx run: --fleet must be a redis://, rediss:// or unix:// URL; got 'notaurl'" });
    const worker = await cli(['worker', '--redis', 'notaurl']);
    expect({ code: worker.code, stdout: worker.stdout, first: firstLine(worker.stderr) }).toEqual({ code: 2, stdout: '', first: "agent-rx worker: --redis must be a redis://, rediss:// or unix:// URL; got 'notaurl'" });
  });

  it('says a refusal of the library once under the command\u2019s name, never "agent-rx: " twice', async () => {
    const cases: [readonly string[], string][] = [
      [['run', '--fleet', 'redis://127.0.0.1:1', '--model', '', 'hi'], 'agent-rx run: not a run spec: options.model must be a non-empty string; got ""'],
      [['run', '--model', '', 'hi'], 'agent-rx run: model must be a non-empty string; got ""'],
      [['worker', '--redis', 'redis://127.0.0.1:1', '--allow-cwd', '/no/such/folder'], 'agent-rx worker: --allow-cwd /no/such/folder: no such directory'],
    ];
    for (const [args, line] of cases) {
      const result = await cli(args);
      expect({ args, code: result.code, first: firstLine(result.stderr) }).toEqual({ args, code: 2, first: line });
      expect(result.stderr).not.toMatch(/agent-rx \w+: agent-rx:/);
    }
  });
});

// The bound below is generous: a worker that hangs waits for Redis forever.
describe('agent-rx worker when Redis cannot be reached', () => {
  it('exits 0 at once on SIGTERM when it never reached Redis (a drain with no runs ends now)', async () => {
    const port = String(await unusedPort());
    const worker = startTaggedNode([CLI_MAIN, 'worker', '--redis', `redis://127.0.0.1:${port}`, '--drain', '2s', '--json'], 'AGENT_RX_FLEET_CLI', pace);
    try {
      await worker.waitForStderr(`connect ECONNREFUSED 127.0.0.1:${port}`);
      worker.child.kill('SIGTERM');
      expect(await worker.exitWithin(10_000)).toEqual({ code: 0, signal: null });
      expect(worker.stdout()).toContain('"type":"closed"');
      expect(worker.stdout()).not.toContain('"type":"ready"');
    } finally {
      worker.cleanUp();
    }
  });

  it('exits 0 on SIGTERM when Redis died under it while it had no run', async () => {
    const worker = await startCliWorker('cli-redis-gone', ['--drain', '2s']);
    try {
      await world.redis().kill();
      await worker.waitForStderr('connect E');
      worker.child.kill('SIGTERM');
      expect(await worker.exitWithin(10_000)).toEqual({ code: 0, signal: null });
      expect(worker.stdout()).toContain('"type":"closed"');
    } finally {
      worker.cleanUp();
      await world.redis().restart();
    }
  });

  it.each([
    ['at --drain', ['--drain', '1s'], false],
    ['at a second signal, the drain not over', ['--drain', '10m'], true],
  ] as const)('stops a run it has when Redis died under it %s: the agent and its tool gone, then exits 0', async (_when, drain, second) => {
    // A heartbeat that outlives the test: the drain, not the fencing, stops the run.
    const worker = await startCliWorker('cli-redis-died', ['--heartbeat-ttl', '10m', ...drain]);
    try {
      const run = world.dispatcher().run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(share());
      const messages = lastValueFrom(run.pipe(toArray()));
      const { agentPid, toolPid } = await agentPids(run);
      await world.redis().kill();
      await worker.waitForStderr('connect E');
      worker.child.kill('SIGTERM');
      if (second) {
        await worker.waitForLine(/"type":"draining"/);
        worker.child.kill('SIGTERM');
      }
      expect(await worker.exitWithin(15_000)).toEqual({ code: 0, signal: null });
      expect(isAlive(agentPid) || isAlive(toolPid)).toBe(false);
      expect(JSON.parse(await worker.waitForLine(/"type":"ended"/))).toMatchObject({ stopped: 'shutdown' });
      // The caller, who cannot read the run either, ends it lost (lostAfterMs).
      expect((await messages).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'lost' });
    } finally {
      worker.cleanUp();
      await world.redis().restart();
    }
  });
});
