import { afterEach, describe, expect, it } from '@jest/globals';
import { lastValueFrom, share, toArray, type Observable } from 'rxjs';
import { retryAgentRun, type CliMessage } from '../../lib/index.js';
import { spawn } from 'node:child_process';
import { isAlive, killLeftovers, startedPids } from '../helpers/processes.js';
import { delay } from '../helpers/tagged-child.js';
import { agentPids, fleetWorld, gone } from './fleet-world.js';

const world = fleetWorld();
afterEach(killLeftovers);
const collect = <T>(source: Observable<T>): Promise<T[]> => lastValueFrom(source.pipe(toArray()));
const terminals = (messages: readonly CliMessage[]) => messages.filter((message) => message.type.startsWith('terminal.'));

// The test workers beat every 200 ms with a 1000 ms TTL; the dispatchers read with 100 ms waits.
describe('a fleet run whose worker or Redis fails', () => {
  it('ends lost within the heartbeat bound when its worker is SIGKILLed, is never started again, and its keeper stops the whole tree of its agent', async () => {
    const doomed = await world.startWorker('doomed', { concurrency: 1 });
    const dispatcher = world.dispatcher();
    const run = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }, { runId: 'orphaned' }).pipe(share());
    const messages = collect(run);
    const { agentPid, toolPid } = await agentPids(run);
    // Another worker with free slots: BullMQ's stall check runs on it.
    const survivor = await world.startWorker('survivor');
    const killedAt = performance.now();
    doomed.kill();
    const result = await messages;
    const lostAfter = performance.now() - killedAt;
    // Whichever saw it first: a reader (the heartbeat is gone) or the other worker (BullMQ's stall check, which fails the job instead of re-running it).
    expect(terminals(result)).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'lost', message: expect.stringMatching(/doomed stopped beating|job stalled more than allowable limit/) })]);
    expect(result.at(-1)?.type).toBe('terminal.failed');
    // TTL 1000 ms, plus a read and a check.
    expect(lostAfter).toBeLessThan(5000);
    // Several stall checks (500 ms apart) later, nobody started it again.
    await delay(2000);
    expect(survivor.lines().filter((line) => line.runId === 'orphaned' && line.event === 'started')).toEqual([]);
    // The worker's keeper (agent-rx's host lifecycle) saw it die and stopped its agent's tree.
    await gone([agentPid, toolPid], 5000);
  });

  it('a worker starting under a name kills what a worker of that name left behind (its keeper lost too), and nothing else', async () => {
    const leftover = (worker: string) => {
      const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: { ...process.env, AGENT_RX_WORKER: worker } });
      child.unref();
      if (child.pid === undefined) throw new Error('sleep did not start');
      startedPids.add(child.pid);
      return child.pid;
    };
    const mine = [leftover('swept'), leftover('swept')];
    const others = leftover('swept-not');
    await world.startWorker('swept');
    await gone(mine, 5000);
    expect(isAlive(others)).toBe(true);
  });

  it('ends lost when its worker freezes (SIGSTOP), and the worker, thawed, stops that agent itself (fencing)', async () => {
    const frozen = await world.startWorker('frozen');
    const dispatcher = world.dispatcher();
    const run = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(share());
    const messages = collect(run);
    const { agentPid, toolPid } = await agentPids(run);
    const pid = frozen.process.child.pid ?? -1;
    process.kill(pid, 'SIGSTOP');
    try {
      expect(terminals(await messages)).toEqual([expect.objectContaining({ reason: 'lost', message: expect.stringMatching(/frozen stopped beating|job stalled more than allowable limit/) })]);
      // Frozen, it cannot stop its agent: the agent runs on, unseen...
      expect(isAlive(agentPid)).toBe(true);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // ...until the worker wakes, finds its heartbeat too old or its stream closed, and stops it.
    await gone([agentPid, toolPid], 10_000);
    const ended = await frozen.waitFor((line) => line.event === 'ended');
    expect(['unreachable', 'ended', 'lock']).toContain(ended.stopped);
  });

  it('ends lost when the only worker is SIGKILLed (BullMQ alone would not notice)', async () => {
    const only = await world.startWorker('only');
    const dispatcher = world.dispatcher();
    const run = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(share());
    const messages = collect(run);
    await agentPids(run);
    const killedAt = performance.now();
    only.kill();
    const result = await messages;
    expect(terminals(result)).toEqual([expect.objectContaining({ reason: 'lost' })]);
    expect(performance.now() - killedAt).toBeLessThan(5000);
  });

  it('retryAgentRun on top runs a lost run again (a new run, on another worker), and still refuses to re-run one that used a tool', async () => {
    const slow = await world.startWorker('retry-slow', { replaySpeed: '2' });
    const dispatcher = world.dispatcher();
    const retried = collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }).pipe(retryAgentRun({ delay: 0 })));
    await slow.waitFor((line) => line.event === 'started');
    slow.kill();
    const other = await world.startWorker('retry-other');
    const result = await retried;
    expect(result.filter((message) => message.type === 'run.retrying')).toHaveLength(1);
    expect(terminals(result).map((message) => message.type)).toEqual(['terminal.completed']);
    expect(other.lines().filter((line) => line.event === 'started')).toHaveLength(1);

    const withTool = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(retryAgentRun({ delay: 0 }), share());
    const guarded = collect(withTool);
    await agentPids(withTool);
    other.kill();
    const refused = await guarded;
    expect(refused.filter((message) => message.type === 'run.retrying')).toEqual([]);
    expect(terminals(refused)).toEqual([expect.objectContaining({ reason: 'lost' })]);
  });

  it('fences its agents when Redis is SIGKILLed: the agent is stopped within the heartbeat TTL, the caller ends lost within lostAfterMs, the worker lives on and serves again', async () => {
    const worker = await world.startWorker('fenced');
    const dispatcher = world.dispatcher({ lostAfterMs: 2000 });
    const run = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(share());
    const messages = collect(run);
    const { agentPid, toolPid } = await agentPids(run);
    const killedAt = performance.now();
    await world.redis().kill();
    const fencedIn = await gone([agentPid, toolPid], 5000);
    const result = await messages;
    const lostIn = performance.now() - killedAt;
    // Lost (Redis worked, then went away), with the connection's own error as the cause.
    expect(terminals(result)).toEqual([expect.objectContaining({ reason: 'lost', message: expect.stringMatching(/Redis at .* could not be reached for 2000 ms \(lostAfterMs\): the run's end is unknown \(connect E[A-Z]+ /) })]);
    expect(fencedIn).toBeLessThan(3000);
    expect(lostIn).toBeLessThan(6000);
    const ended = await worker.waitFor((line) => line.event === 'ended');
    expect(ended.stopped).toBe('unreachable');
    expect(worker.lines().filter((line) => line.event === 'unhandled')).toEqual([]);
    expect(worker.process.child.exitCode).toBeNull();
    // Redis back (empty: no persistence here): the same worker and a new dispatcher serve new runs.
    await world.redis().restart();
    const again = await collect(world.dispatcher().run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }));
    expect(again.at(-1)?.type).toBe('terminal.completed');
  });

  it('drains on close({ drainMs }): a run that ends within it completes, one that does not ends lost, and the worker exits', async () => {
    const worker = await world.startWorker('draining', { drainMs: 1500 });
    const dispatcher = world.dispatcher();
    const short = collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }));
    const long = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(share());
    const longMessages = collect(long);
    const { agentPid, toolPid } = await agentPids(long);
    const signalledAt = performance.now();
    worker.process.child.kill('SIGTERM');
    expect((await short).at(-1)?.type).toBe('terminal.completed');
    const ended = await longMessages;
    expect(terminals(ended)).toEqual([expect.objectContaining({ reason: 'lost', message: expect.stringContaining('draining shut down') })]);
    expect(performance.now() - signalledAt).toBeGreaterThanOrEqual(1400);
    expect(await worker.process.exitWithin(10_000)).toEqual({ code: 0, signal: null });
    expect(isAlive(agentPid) || isAlive(toolPid)).toBe(false);
    // Redis was there throughout: closing the queue's connections reported nothing.
    expect(worker.lines().filter((line) => line.event === 'error' || line.event === 'unhandled')).toEqual([]);
  });

  it('takes no new run while it drains: one put on the queue then is not started on it (refused, or left to another worker)', async () => {
    const worker = await world.startWorker('draining-no-new', { concurrency: 2, drainMs: 10_000 });
    const dispatcher = world.dispatcher({ startTimeoutMs: 3000 });
    const running = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(share());
    const runningMessages = collect(running);
    await agentPids(running);
    worker.process.child.kill('SIGTERM');
    await delay(200);
    const late = await collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }, { runId: 'late' }));
    expect(late).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'lost', message: expect.stringMatching(/draining-no-new was shutting down|no worker took the run/) })]);
    expect(worker.lines().filter((line) => line.runId === 'late' && line.event === 'started')).toEqual([]);
    worker.kill();
    await runningMessages;
  });

});
