import { describe, expect, it } from '@jest/globals';
import { lastValueFrom, share, take, toArray, type Observable } from 'rxjs';
import { runPi, type CliMessage } from '../../lib/index.js';
import type { RunEntry } from '../../lib/fleet.js';
import { delay } from '../helpers/tagged-child.js';
import { FLEET_AGENT, agentPids, fleetWorld, gone } from './fleet-world.js';

const world = fleetWorld();

/** What a reader sees of a run: types and texts in order, tool.updates of one call in a row kept as the last (the worker coalesces them). */
function shape(messages: readonly CliMessage[]): string[] {
  const kept = messages.filter((message, index) => {
    const next = messages[index + 1];
    return !(message.type === 'tool.update' && next?.type === 'tool.update' && next.toolCallId === message.toolCallId);
  });
  return kept.map((message) => {
    switch (message.type) {
      case 'assistant':
      case 'assistant.thought':
        return `${message.type} ${message.text}`;
      case 'tool.update':
        return `${message.type} ${message.output}`;
      case 'terminal.failed':
        return `${message.type} ${message.reason}`;
      default:
        return message.type;
    }
  });
}

const collect = <T>(source: Observable<T>): Promise<T[]> => lastValueFrom(source.pipe(toArray()));

describe('a fleet run', () => {
  it.each(['text', 'thinking_text', 'tool_call_then_text', 'http500_noretry', 'http401'])(
    'emits the messages the local run emits on the same recording (%s), one terminal, last',
    async (model) => {
      await world.startWorker('same-1');
      await world.startWorker('same-2');
      const dispatcher = world.dispatcher();
      const prompt = 'hi';
      const [fleet, local] = await Promise.all([
        collect(dispatcher.run({ agent: 'pi', options: { prompt, model } })),
        collect(runPi({ prompt, model, executable: process.execPath, executableArgs: [FLEET_AGENT], env: { PI_REPLAY_SPEED: '0.2' } })),
      ]);
      expect(shape(fleet)).toEqual(shape(local));
      expect(fleet.filter((message) => message.type.startsWith('terminal.'))).toHaveLength(1);
      expect(fleet.at(-1)?.type).toMatch(/^terminal\./);
    },
  );

  it('is cold: each subscription is a run of its own, on any worker', async () => {
    const first = await world.startWorker('cold-1');
    const second = await world.startWorker('cold-2');
    const dispatcher = world.dispatcher();
    const run = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } });
    const results = await Promise.all([collect(run), collect(run), collect(run)]);
    for (const messages of results) expect(messages.at(-1)?.type).toBe('terminal.completed');
    const started = [...first.lines(), ...second.lines()].filter((line) => line.event === 'started').map((line) => line.runId);
    expect(new Set(started).size).toBe(3);
  });

  it('stops the agent and its own-session tool on the worker when the caller unsubscribes, and its stream ends aborted', async () => {
    const worker = await world.startWorker('stop-1');
    const dispatcher = world.dispatcher();
    const runId = 'unsubscribe-me';
    const run = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }, { runId }).pipe(share());
    const subscription = run.subscribe();
    const pids = await agentPids(run);
    const { agentPid, toolPid } = pids;
    subscription.unsubscribe();
    const ms = await gone([agentPid, toolPid]);
    expect(ms).toBeLessThan(10_000);
    const ended = await worker.waitFor((line) => line.event === 'ended' && line.runId === runId);
    expect(ended.stopped).toBe('cancel');
    const rest = await collect(dispatcher.follow(runId));
    expect(rest.at(-1)?.message).toMatchObject({ type: 'terminal.failed', reason: 'aborted' });
  });

  it('never starts a run cancelled while it waits in the queue', async () => {
    const worker = await world.startWorker('queue-1', { concurrency: 1 });
    const dispatcher = world.dispatcher();
    const busy = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }, { runId: 'busy' }).pipe(share());
    const holding = busy.subscribe();
    await agentPids(busy);
    const waiting = collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }, { runId: 'queued' }));
    await delay(300);
    await dispatcher.cancel('queued');
    const messages = await waiting;
    expect(messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'aborted', message: 'the run was cancelled before it started' })]);
    holding.unsubscribe();
    await worker.waitFor((line) => line.event === 'ended' && line.runId === 'busy');
    // The slot is free: had the job stayed in the queue, it would be taken now.
    await delay(1000);
    expect(worker.lines().filter((line) => line.runId === 'queued')).toEqual([]);
    const client = world.redis().client();
    expect(await client.exists('agentrx:{queued}:owner')).toBe(0);
  });

  it('follow replays exactly the rest from every entry id, and nothing after the terminal', async () => {
    await world.startWorker('follow-1');
    const dispatcher = world.dispatcher();
    await collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'tool_call_then_text' } }, { runId: 'replayed' }));
    const all: RunEntry[] = await collect(dispatcher.follow('replayed'));
    expect(all.length).toBeGreaterThan(5);
    expect(all.at(-1)?.message.type).toBe('terminal.completed');
    for (const [index, entry] of all.entries()) {
      const rest = await collect(dispatcher.follow('replayed', { after: entry.id }));
      expect(rest).toEqual(all.slice(index + 1));
    }
  });

  it('follow reads a run while it runs; a reader that stops and resumes from its last id misses nothing, and stopping it leaves the run alone', async () => {
    await world.startWorker('follow-live');
    const dispatcher = world.dispatcher();
    const run = collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }, { runId: 'live' }));
    const firstThree = await lastValueFrom(dispatcher.follow('live').pipe(take(3), toArray()));
    const last = firstThree.at(-1);
    if (last === undefined) throw new Error('no entries');
    const rest = await collect(dispatcher.follow('live', { after: last.id }));
    const messages = await run;
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    expect([...firstThree, ...rest].map((entry) => entry.message)).toEqual(messages);
  });

  it('ends a reader of a run nobody knows with lost, and refuses an entry id that is not one', async () => {
    const dispatcher = world.dispatcher();
    const entries = await collect(dispatcher.follow('nobody-knows-me'));
    expect(entries).toEqual([{ id: '', message: expect.objectContaining({ type: 'terminal.failed', reason: 'lost' }) }]);
    expect(() => dispatcher.follow('x', { after: 'yesterday' })).toThrow(TypeError);
    expect(() => dispatcher.follow('has space')).toThrow(TypeError);
  });

  it('a reader that comes a moment before another caller enqueues the run reads all of it', async () => {
    await world.startWorker('early-1');
    const reader = world.dispatcher();
    const caller = world.dispatcher();
    const following = collect(reader.follow('enqueued-later'));
    await delay(400);
    const messages = await collect(caller.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }, { runId: 'enqueued-later' }));
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    expect((await following).map((entry) => entry.message)).toEqual(messages);
  });

  it('refuses a spec that is not one before anything is enqueued, and anything that names what runs it', () => {
    const dispatcher = world.dispatcher();
    expect(() => dispatcher.run({ agent: 'pi', options: { prompt: '  ' } })).toThrow(/options.prompt must not be empty/);
    expect(() => dispatcher.run({ agent: 'pi', options: { prompt: 'hi', executable: '/bin/sh' } } as never)).toThrow(TypeError);
    expect(() => dispatcher.run({ agent: 'pi', options: { prompt: 'hi', env: { A: '1' } } } as never)).toThrow(TypeError);
    expect(() => dispatcher.run({ agent: 'cursor', options: { prompt: 'hi' } } as never)).toThrow(TypeError);
  });

  it('ends with setup when the worker does not run that agent, or refuses the working directory', async () => {
    await world.startWorker('refuse-1', { allowedCwd: process.cwd() });
    const dispatcher = world.dispatcher();
    const claude = await collect(dispatcher.run({ agent: 'claude', options: { prompt: 'hi' } }));
    expect(claude).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'setup', message: expect.stringContaining('does not run claude') })]);
    const cwd = await collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text', cwd: '/' } }));
    expect(cwd).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'setup', message: expect.stringContaining('is not one this worker allows') })]);
    const inside = await collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text', cwd: `${process.cwd()}/spec` } }));
    expect(inside.at(-1)?.type).toBe('terminal.completed');
  });

  it('ends with lost when no worker takes the run within startTimeoutMs, and removes it from the queue', async () => {
    const dispatcher = world.dispatcher({ queue: 'nobody-serves-this', startTimeoutMs: 500 });
    const started = performance.now();
    const messages = await collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }, { runId: 'unserved' }));
    expect(messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'lost', message: expect.stringContaining('startTimeoutMs') })]);
    expect(performance.now() - started).toBeLessThan(5000);
    const worker = await world.startWorker('late', { queue: 'nobody-serves-this' });
    await delay(800);
    expect(worker.lines().filter((line) => line.runId === 'unserved')).toEqual([]);
  });

  it('refuses a run id used already: its stream would replay the other run', async () => {
    await world.startWorker('reuse-1');
    const dispatcher = world.dispatcher();
    await collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }, { runId: 'once' }));
    const again = await collect(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }, { runId: 'once' }));
    expect(again).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'setup', message: expect.stringContaining('used already') })]);
  });

  it('closing the dispatcher cancels the runs it started: they end stopped, their agents gone', async () => {
    await world.startWorker('close-1');
    const dispatcher = world.dispatcher();
    const run = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }).pipe(share());
    const messages = collect(run);
    const { agentPid, toolPid } = await agentPids(run);
    await dispatcher.close();
    expect((await messages).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'stopped' });
    await gone([agentPid, toolPid]);
  });
});
