import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, NEVER, Subject, Subscription, take, tap, toArray } from 'rxjs';
import { activeRunCount, processLines, stopAllRuns, type ProcessExit, type ProcessItem, type StopReport } from '../../lib/index.js';
import { collect, fixture, grandchildOf, isAlive, killLeftovers, pidOfReady, startUntil, startedPids } from '../helpers/processes.js';

const node = process.execPath;
const exitOf = (items: readonly ProcessItem[]): ProcessExit => {
  const last = items.at(-1);
  if (last?.kind !== 'exit') throw new Error('the stream did not end with an exit item');
  return last;
};

/** Every live process whose environment holds `NAME=value` (Linux). */
async function processesTagged(tag: string): Promise<number[]> {
  const needle = Buffer.from(`${tag}\0`);
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = await readFile(`/proc/${name}/environ`);
      if (environ.includes(needle) && isAlive(Number(name))) found.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

afterEach(async () => {
  await stopAllRuns();
  killLeftovers();
});

describe('processLines: output', () => {
  it('emits LF-framed lines, CRLF stripped, U+2028 kept, multi-byte text whole, then one exit item', async () => {
    const items = await collect(processLines(node, [fixture('crlf.mjs')]));
    expect(items.slice(0, -1)).toEqual([
      { kind: 'line', text: 'one' },
      { kind: 'line', text: 'two' },
      { kind: 'line', text: 'has\rcarriage' },
      { kind: 'line', text: JSON.stringify({ text: 'a\u2028b\u2029c' }) },
      { kind: 'line', text: 'héllo wörld ✓ 🚀' },
    ]);
    expect(exitOf(items)).toMatchObject({ kind: 'exit', exitCode: 0, signal: null, startError: null, stderr: '' });
  });

  it('emits a final line that has no newline', async () => {
    const items = await collect(processLines(node, [fixture('no-final-newline.mjs')]));
    expect(items.slice(0, -1)).toEqual([
      { kind: 'line', text: 'first' },
      { kind: 'line', text: 'second without newline' },
    ]);
  });

  it('reports a 64 MiB line as too long without holding it, and goes on with the next lines', async () => {
    const items = await collect(processLines(node, [fixture('huge-line.mjs')], { maxLineBytes: 1024 * 1024 }));
    expect(items.slice(0, -1)).toEqual([
      { kind: 'line-too-long', bytes: 64 * 1024 * 1024, head: 'x'.repeat(256) },
      { kind: 'line', text: 'after one' },
      { kind: 'line', text: 'after two' },
    ]);
    expect(exitOf(items).exitCode).toBe(0);
  });

  it('reports the exit code and keeps a bounded tail of 1 MiB of stderr, saying how much was cut', async () => {
    const items = await collect(processLines(node, [fixture('stderr-exit.mjs')]));
    const exit = exitOf(items);
    expect(items[0]).toEqual({ kind: 'line', text: 'some output' });
    expect(exit.exitCode).toBe(3);
    expect(exit.stderr).toHaveLength(64 * 1024);
    expect(exit.stderr.endsWith('fatal: the end marker\n')).toBe(true);
    expect(exit.stderrTruncatedBytes).toBe(1024 * 1024 + 3 - 64 * 1024);
  });

  it('honours a smaller stderrTailBytes', async () => {
    const exit = exitOf(await collect(processLines(node, [fixture('stderr-exit.mjs')], { stderrTailBytes: 10 })));
    expect(exit.stderr).toBe('d marker\n'.padStart(10, 'n'));
  });

  it('emits no stderr lines unless asked; with stderrLines, every line of each pipe in its order, and the tail as before', async () => {
    const quiet = await collect(processLines(node, [fixture('interleaved.mjs')]));
    expect(quiet.map((item) => item.kind)).toEqual(['line', 'line', 'exit']);
    const items = await collect(processLines(node, [fixture('interleaved.mjs')], { stderrLines: true }));
    // Two pipes: each keeps its order; between them, the order they were read in (no assertion on a race).
    expect(items.filter((item) => item.kind === 'line')).toEqual([
      { kind: 'line', text: 'out 1' },
      { kind: 'line', text: 'out 2' },
    ]);
    // The last stderr line has no newline: it comes when the pipe ends, before the exit item.
    expect(items.filter((item) => item.kind === 'stderr-line')).toEqual([
      { kind: 'stderr-line', text: 'err 1' },
      { kind: 'stderr-line', text: 'err 2' },
    ]);
    expect(items).toHaveLength(5);
    expect(exitOf(items)).toMatchObject({ exitCode: 0, stderr: 'err 1\r\nerr 2' });
  });

  it('cuts a stderr line over maxLineBytes to its head, and goes on', async () => {
    const items = await collect(processLines(node, [fixture('interleaved.mjs')], { stderrLines: true, maxLineBytes: 1000, env: { STDERR_LONG: '5000' } }));
    const stderr = items.filter((item) => item.kind === 'stderr-line');
    expect(stderr.map((item) => item.text.length)).toEqual([5, 256, 5]);
    expect(stderr[1]?.text).toBe('x'.repeat(256));
  });

  it('reports a process killed by a signal', async () => {
    const exit = exitOf(await collect(processLines(node, [fixture('self-signal.mjs'), 'SIGKILL'])));
    expect(exit).toMatchObject({ exitCode: null, signal: 'SIGKILL', startError: null });
  });
});

describe('processLines: spawn failures are items, not errors', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('gives an exit item with ENOENT for a missing command', async () => {
    const items = await collect(processLines('agent-rx-no-such-command', ['--help']));
    expect(items).toHaveLength(1);
    expect(exitOf(items)).toMatchObject({
      exitCode: null,
      signal: null,
      pid: null,
      startError: { stage: 'spawn', code: 'ENOENT', problem: { kind: 'not-on-path', program: 'agent-rx-no-such-command' } },
    });
    expect(activeRunCount()).toBe(0);
  });

  it('gives an exit item with ENOENT for a path that does not exist, and says the path is missing', async () => {
    const missing = join(tmpdir(), `agent-rx-missing-${randomUUID()}`, 'agent');
    const exit = exitOf(await collect(processLines(missing)));
    expect(exit.startError).toMatchObject({ stage: 'spawn', code: 'ENOENT', problem: { kind: 'missing', path: missing } });
  });

  it('says which folder is missing when the run folder does not exist', async () => {
    const gone = join(tmpdir(), `agent-rx-missing-${randomUUID()}`);
    const exit = exitOf(await collect(processLines(node, ['-e', ''], { cwd: gone })));
    expect(exit.startError).toMatchObject({ stage: 'spawn', problem: { kind: 'missing-cwd', cwd: gone } });
  });

  it('gives an exit item with EACCES for a file that is not executable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agent-rx-'));
    dirs.push(dir);
    const script = join(dir, 'not-executable.sh');
    await writeFile(script, '#!/bin/sh\necho hi\n');
    await chmod(script, 0o644);
    const exit = exitOf(await collect(processLines(script)));
    expect(exit.startError?.code).toBe('EACCES');
    expect(exit.startError?.message).toContain(script);
    expect(exit.startError?.problem).toEqual({ kind: 'not-executable', path: script });
  });

  it('throws a TypeError at call time for a stderrLines that is not a boolean', () => {
    expect(() => processLines(node, [], { stderrLines: 'yes' as unknown as boolean })).toThrow(/stderrLines must be a boolean/);
  });

  it('throws a TypeError at call time for invalid options, before spawning', () => {
    expect(() => processLines('')).toThrow(TypeError);
    expect(() => processLines(node, [1 as unknown as string])).toThrow(TypeError);
    expect(() => processLines(node, [], { gracePeriodMs: -1 })).toThrow(TypeError);
    expect(() => processLines(node, [], { maxLineBytes: 0 })).toThrow(TypeError);
    expect(() => processLines(node, [], { interrupt: { signal: 'TERM' as NodeJS.Signals } })).toThrow(TypeError);
    expect(activeRunCount()).toBe(0);
  });
});

describe('processLines: stdin, env, cwd, coldness', () => {
  it('closes stdin by default, so a reader sees EOF at once', async () => {
    const items = await collect(processLines(node, [fixture('echo-stdin.mjs')]));
    expect(items.filter((item) => item.kind === 'line').at(-1)).toEqual({ kind: 'line', text: 'read 0 bytes' });
  });

  it('writes a string or Buffer to stdin, then closes it', async () => {
    const text = await collect(processLines(node, [fixture('echo-stdin.mjs')], { stdin: 'hello\nworld' }));
    expect(text.slice(0, -1)).toEqual([
      { kind: 'line', text: 'hello' },
      { kind: 'line', text: 'world' },
      { kind: 'line', text: 'read 11 bytes' },
    ]);
    const bytes = await collect(processLines(node, [fixture('echo-stdin.mjs')], { stdin: Buffer.from('ab') }));
    expect(bytes[1]).toEqual({ kind: 'line', text: 'read 2 bytes' });
  });

  it('writes an Observable stdin as it emits and closes stdin when it completes', async () => {
    const input = new Subject<string>();
    const items: ProcessItem[] = [];
    const done = new Promise<void>((resolve) => {
      processLines(node, [fixture('echo-stdin.mjs')], { stdin: input }).subscribe({
        next: (item) => {
          items.push(item);
          // Each echoed line asks for the next chunk: input really flows while the process runs.
          if (item.kind === 'line' && item.text === 'one') input.next('two\n');
          if (item.kind === 'line' && item.text === 'two') input.complete();
        },
        complete: resolve,
      });
    });
    input.next('one\n');
    await done;
    expect(items.slice(0, -1)).toEqual([
      { kind: 'line', text: 'one' },
      { kind: 'line', text: 'two' },
      { kind: 'line', text: '' },
      { kind: 'line', text: 'read 8 bytes' },
    ]);
  });

  it('merges env over process.env, can remove a variable, and runs in cwd', async () => {
    process.env['AGENT_RX_TEST_INHERITED'] = 'inherited';
    process.env['AGENT_RX_TEST_REMOVED'] = 'present';
    try {
      const script = 'console.log(JSON.stringify([process.env.AGENT_RX_TEST_SET, process.env.AGENT_RX_TEST_INHERITED, process.env.AGENT_RX_TEST_REMOVED ?? null, process.cwd()]))';
      const items = await collect(
        processLines(node, ['-e', script], { cwd: tmpdir(), env: { AGENT_RX_TEST_SET: 'set', AGENT_RX_TEST_REMOVED: undefined } }),
      );
      const first = items[0];
      expect(first?.kind).toBe('line');
      expect(JSON.parse(first?.kind === 'line' ? first.text : 'null')).toEqual(['set', 'inherited', null, tmpdir()]);
    } finally {
      delete process.env['AGENT_RX_TEST_INHERITED'];
      delete process.env['AGENT_RX_TEST_REMOVED'];
    }
  });

  it('is cold: nothing spawns before subscribe, and each subscription spawns its own process', async () => {
    const source = processLines(node, ['-e', 'console.log(process.pid)']);
    expect(activeRunCount()).toBe(0);
    const [a, b] = await Promise.all([collect(source), collect(source)]);
    const pidA = exitOf(a).pid;
    const pidB = exitOf(b).pid;
    expect(pidA).not.toBeNull();
    expect(pidA).not.toBe(pidB);
    expect(a[0]).toEqual({ kind: 'line', text: String(pidA) });
  });

  it('stops reading when a downstream take() unsubscribes from inside next', async () => {
    const reports: unknown[] = [];
    const firstTwo = await firstValueFrom(
      processLines(node, [fixture('lines.mjs'), '100000'], { onStopped: (report) => reports.push(report) }).pipe(take(2), toArray()),
    );
    expect(firstTwo).toEqual([
      { kind: 'line', text: 'line 0' },
      { kind: 'line', text: 'line 1' },
    ]);
    await stopAllRuns();
    expect(reports).toHaveLength(1);
  });
});

describe('processLines: the stop sequence', () => {
  it('interrupts a cooperative process on unsubscribe; it is gone and nothing is emitted after', async () => {
    const run = await startUntil('forever.mjs', [], (text) => text.startsWith('ready'));
    const pid = pidOfReady(run.items);
    const seen = run.items.length;
    run.stop();
    const report = await run.stopped;
    expect(report).toMatchObject({ pid, requested: true, exitedGracefully: true, confirmed: true, survivors: [] });
    expect(report.killed).toEqual([]);
    expect(isAlive(pid)).toBe(false);
    expect(run.items).toHaveLength(seen);
  });

  it('kills a process that ignores SIGTERM and SIGINT after the grace period, after the subscriber left', async () => {
    const run = await startUntil('ignore-signals.mjs', [], (text) => text.startsWith('ready'), { gracePeriodMs: 300 });
    const pid = pidOfReady(run.items);
    const stoppedAt = performance.now();
    run.stop();
    const report = await run.stopped;
    expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(290);
    expect(report).toMatchObject({ pid, exitedGracefully: false, confirmed: true });
    expect(report.killed).toContain(pid);
    expect(isAlive(pid)).toBe(false);
  });

  it('sends the configured interrupt signal', async () => {
    const run = await startUntil('ignore-signals.mjs', [], (text) => text.startsWith('ready'), {
      gracePeriodMs: 10_000,
      interrupt: { signal: 'SIGUSR2' },
    });
    const pid = pidOfReady(run.items);
    run.stop();
    // SIGUSR2's default action ends node, so the run ends well before the grace period.
    const report = await run.stopped;
    expect(report.exitedGracefully).toBe(true);
    expect(report.durationMs).toBeLessThan(10_000);
    expect(isAlive(pid)).toBe(false);
  });

  it('interrupts through stdin bytes when stdin is still open', async () => {
    const run = await startUntil('stdin-interrupt.mjs', [], (text) => text.startsWith('ready'), {
      stdin: NEVER,
      gracePeriodMs: 10_000,
      interrupt: { stdin: '\u0003', signal: null },
    });
    const pid = pidOfReady(run.items);
    run.stop();
    const report = await run.stopped;
    expect(report).toMatchObject({ exitedGracefully: true, confirmed: true, killed: [] });
    expect(isAlive(pid)).toBe(false);
  });

  it('swallows EPIPE when the interrupt writes to a stdin the process closed', async () => {
    const run = await startUntil('closed-stdin.mjs', [], (text) => text.startsWith('ready'), {
      stdin: NEVER,
      interrupt: { stdin: '\u0003', signal: 'SIGTERM' },
    });
    const pid = pidOfReady(run.items);
    run.stop();
    const report = await run.stopped;
    expect(report.confirmed).toBe(true);
    expect(report.errors.join('\n')).toMatch(/EPIPE/);
    expect(isAlive(pid)).toBe(false);
  });

  it('skips the stdin interrupt without an error when stdin was already closed', async () => {
    const run = await startUntil('forever.mjs', [], (text) => text.startsWith('ready'), {
      stdin: '',
      interrupt: { stdin: '\u0003', signal: 'SIGTERM' },
    });
    const pid = pidOfReady(run.items);
    run.stop();
    const report = await run.stopped;
    expect(report).toMatchObject({ confirmed: true, exitedGracefully: true, errors: [] });
    expect(isAlive(pid)).toBe(false);
  });

  it('kills a grandchild that moved to its own session when the run is stopped', async () => {
    const run = await startUntil('detached-grandchild.mjs', ['hostile'], (text) => text.startsWith('{'), { gracePeriodMs: 200 });
    const grandchild = grandchildOf(run.items);
    expect(isAlive(grandchild)).toBe(true);
    run.stop();
    const report = await run.stopped;
    expect(report.confirmed).toBe(true);
    expect(report.killed).toContain(grandchild);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('kills a reparented grandchild (its parent already exited) when the run is stopped', async () => {
    const run = await startUntil('orphan-grandchild.mjs', [], (text) => text.startsWith('{'));
    const grandchild = grandchildOf(run.items);
    expect(isAlive(grandchild)).toBe(true);
    run.stop();
    await run.stopped;
    expect(isAlive(grandchild)).toBe(false);
  });

  it('kills descendants that outlive a root which exits by itself, in its group or its own session, before the exit item', async () => {
    for (const script of ['orphan-grandchild.mjs', 'detached-grandchild.mjs']) {
      const heard: string[] = [];
      let grandchild = 0;
      let aliveAtExit: boolean | undefined;
      await collect(
        processLines(node, [fixture(script), 'exit'], {
          onStopped: (report) => {
            heard.push(`stopped confirmed=${String(report.confirmed)} requested=${String(report.requested)}`);
          },
        }).pipe(
          tap((item) => {
            if (item.kind === 'line') grandchild = (JSON.parse(item.text) as { grandchild: number }).grandchild;
            if (item.kind === 'exit') {
              heard.push(`exit ${String(item.exitCode)}`);
              aliveAtExit = isAlive(grandchild);
            }
          }),
        ),
      );
      // The clean-up is over (and reported) when the exit item comes: nothing of the run is left.
      expect(heard).toEqual(['stopped confirmed=true requested=false', 'exit 0']);
      expect(grandchild).toBeGreaterThan(0);
      expect(aliveAtExit).toBe(false);
    }
  });

  it('does nothing when unsubscribed after the process already exited', async () => {
    const reports: unknown[] = [];
    let subscription: Subscription | undefined;
    const done = new Promise<void>((resolve) => {
      subscription = processLines(node, ['-e', ''], { onStopped: (report) => reports.push(report) }).subscribe({ complete: resolve });
    });
    await done;
    subscription?.unsubscribe();
    subscription?.unsubscribe();
    await stopAllRuns();
    expect(reports).toEqual([expect.objectContaining({ requested: false, confirmed: true, killed: [] })]);
  });

  it('stopAllRuns() stops every active run and resolves when all are gone', async () => {
    const runs = await Promise.all([
      startUntil('forever.mjs', [], (text) => text.startsWith('ready')),
      startUntil('ignore-signals.mjs', [], (text) => text.startsWith('ready'), { gracePeriodMs: 200 }),
      startUntil('detached-grandchild.mjs', ['hostile'], (text) => text.startsWith('{'), { gracePeriodMs: 200 }),
    ]);
    const pids = [pidOfReady(runs[0].items), pidOfReady(runs[1].items), grandchildOf(runs[2].items)];
    expect(activeRunCount()).toBe(3);
    await stopAllRuns();
    expect(activeRunCount()).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it('stopAllRuns() ends the stream of a run still listened to: the rest of its output, an exit item saying so, completion', async () => {
    const cooperative = await startUntil('forever.mjs', [], (text) => text.startsWith('ready'));
    const hostile = await startUntil('ignore-signals.mjs', [], (text) => text.startsWith('ready'), { gracePeriodMs: 200 });
    await stopAllRuns();
    await Promise.all([cooperative.completed, hostile.completed]);
    expect(exitOf(cooperative.items)).toMatchObject({ signal: 'SIGINT', stoppedBy: { kind: 'host' } });
    // The hostile one printed while it was being interrupted: that line arrives before its exit.
    expect(hostile.items.slice(1, -1)).toEqual([{ kind: 'line', text: 'ignored SIGINT' }]);
    expect(exitOf(hostile.items)).toMatchObject({ signal: 'SIGKILL', stoppedBy: { kind: 'host' } });
    expect((await hostile.stopped).cause).toBe('host');
  });

  it('does not call a run stopped by the host when it had exited by itself before', async () => {
    const items = await collect(processLines(node, [fixture('lines.mjs'), '3']));
    await stopAllRuns();
    expect(exitOf(items).stoppedBy).toBeUndefined();
  });
});

describe('processLines: time limits', () => {
  it('timeoutMs stops a run that takes too long and says so in its exit item', async () => {
    const items = await collect(processLines(node, [fixture('forever.mjs')], { timeoutMs: 1500 }));
    expect(items[0]).toMatchObject({ kind: 'line' });
    expect(exitOf(items)).toMatchObject({ signal: 'SIGINT', stoppedBy: { kind: 'timeout', limit: 'run', ms: 1500 } });
  });

  it('idleTimeoutMs stops a run that printed nothing for that long, after the grace period if it must', async () => {
    let report: StopReport | undefined;
    const items = await collect(
      processLines(node, [fixture('ignore-signals.mjs')], { idleTimeoutMs: 1500, gracePeriodMs: 100, onStopped: (stop) => (report = stop) }),
    );
    // Its "ready" line (printed once it ignores SIGINT) started the idle limit over: the interrupt is ignored, SIGKILL follows.
    expect(items[0]).toMatchObject({ kind: 'line', text: expect.stringMatching(/^ready /) as unknown });
    expect(exitOf(items)).toMatchObject({ signal: 'SIGKILL', stoppedBy: { kind: 'timeout', limit: 'idle', ms: 1500 } });
    await stopAllRuns();
    expect(report).toMatchObject({ cause: 'timeout', exitedGracefully: false, confirmed: true });
  });

  it('does not time out a slow but steady run: every line starts the idle limit over', async () => {
    // 30 lines, 100 ms apart: 3 s in all, longer than the idle limit, never 2 s silent (Node's start included).
    const items = await collect(processLines(node, [fixture('steady.mjs'), '100', '30'], { idleTimeoutMs: 2000 }));
    expect(items.filter((item) => item.kind === 'line')).toHaveLength(30);
    expect(exitOf(items)).toMatchObject({ exitCode: 0, signal: null });
    expect(exitOf(items).stoppedBy).toBeUndefined();
  });

  it('leaves a run that ends within its limits as it is', async () => {
    const items = await collect(processLines(node, [fixture('lines.mjs'), '3'], { timeoutMs: 20_000, idleTimeoutMs: 10_000 }));
    expect(exitOf(items)).toMatchObject({ exitCode: 0 });
    expect(exitOf(items).stoppedBy).toBeUndefined();
  });

  it('rejects limits that are not a positive number of ms a timer can hold, at call time', () => {
    for (const value of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
      expect(() => processLines(node, [], { timeoutMs: value })).toThrow(TypeError);
      expect(() => processLines(node, [], { idleTimeoutMs: value })).toThrow(TypeError);
    }
  });
});

describe('processLines: many runs', () => {
  it('leaves zero survivors after 50 runs subscribed and unsubscribed at random moments', async () => {
    const tag = `AGENT_RX_TEST_TAG=${randomUUID()}`;
    const [tagName, tagValue] = tag.split('=') as [string, string];
    const scripts = ['forever.mjs', 'ignore-signals.mjs', 'detached-grandchild.mjs', 'orphan-grandchild.mjs', 'lines.mjs'];
    const stops: Promise<void>[] = [];
    for (let i = 0; i < 50; i += 1) {
      const script = scripts[i % scripts.length] ?? 'forever.mjs';
      const args = script === 'detached-grandchild.mjs' && i % 2 === 0 ? ['hostile'] : [];
      const source = processLines(node, [fixture(script), ...args], { gracePeriodMs: 150, env: { [tagName]: tagValue } });
      const subscription = source.subscribe();
      const moment = Math.random();
      // A third stop at once (before the child runs), the rest after up to 300 ms.
      if (moment < 0.33) {
        subscription.unsubscribe();
        continue;
      }
      stops.push(
        new Promise((resolve) =>
          setTimeout(() => {
            subscription.unsubscribe();
            resolve();
          }, Math.floor(moment * 300)),
        ),
      );
    }
    await Promise.all(stops);
    await stopAllRuns();
    expect(activeRunCount()).toBe(0);
    expect(await processesTagged(tag)).toEqual([]);
  });
});

// Everything a test starts is ended by pid; make sure the set is drained.
afterAll(() => {
  expect(startedPids.size).toBe(0);
});
