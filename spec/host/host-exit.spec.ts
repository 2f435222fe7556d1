import { afterEach, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Observable } from 'rxjs';
import { processLines, runPi, stopAllRuns, type CliMessage, type ProcessItem } from '../../lib/index.js';
import { fixture, isAlive } from '../helpers/processes.js';
import { delay, ROOT, startTaggedNode, type ChildExit, type TaggedChild, TSX_CACHE_LINK } from '../helpers/tagged-child.js';

// "No process outlives its host, whatever way the host ends" (ARCHITECTURE.md §4), checked from
// outside: a host child runs the fake tool agent, whose tool sits in its own session; the host
// ends one way or another; a /proc scan for a tag that every descendant inherits counts what is
// left, independently of the library.

const HOST = join(ROOT, 'spec/host/host.ts');
const TAG_NAME = 'AGENT_RX_HOST_TEST';
/** How long the host may take to end, and then the keeper to clean up after it. */
const EXIT_BOUND_MS = 15_000;
const SURVIVOR_BOUND_MS = 10_000;
const TEST_TIMEOUT_MS = 60_000;

const onLinux = process.platform === 'linux' ? describe : describe.skip;

const started: TaggedChild[] = [];

afterEach(() => {
  for (const child of started.splice(0)) child.cleanUp();
});

function startHost(args: readonly string[], env: Readonly<Record<string, string>> = {}): TaggedChild {
  const host = startTaggedNode([HOST, ...args], TAG_NAME, env);
  started.push(host);
  return host;
}

/** Polls until the directory is empty or the deadline passes; what is left. */
async function leftoversIn(dir: string, deadline: number): Promise<string[]> {
  for (;;) {
    const left = readdirSync(dir).filter((entry) => entry !== TSX_CACHE_LINK);
    if (left.length === 0 || performance.now() >= deadline) return left;
    await delay(50);
  }
}

interface HostPids {
  readonly host: number;
  readonly agent: number;
  readonly tool: number;
  /** Whether the host saw the tool alive when it printed `ready`. */
  readonly toolAlive: boolean;
}

function readyPids(line: string): HostPids {
  return JSON.parse(line.slice('ready '.length)) as HostPids;
}

interface ExitPath {
  readonly name: string;
  readonly mode: string;
  /** Sent to the host once it is ready. */
  readonly signal?: NodeJS.Signals;
  readonly expected: ChildExit;
}

const EXIT_PATHS: readonly ExitPath[] = [
  { name: 'process.exit()', mode: 'exit', expected: { code: 0, signal: null } },
  { name: 'an uncaught exception', mode: 'throw', expected: { code: 1, signal: null } },
  { name: 'an unhandled rejection', mode: 'reject', expected: { code: 1, signal: null } },
  { name: 'SIGTERM with no handler of the host', mode: 'wait', signal: 'SIGTERM', expected: { code: null, signal: 'SIGTERM' } },
  { name: 'SIGINT with no handler of the host', mode: 'wait', signal: 'SIGINT', expected: { code: null, signal: 'SIGINT' } },
  { name: 'SIGHUP with no handler of the host', mode: 'wait', signal: 'SIGHUP', expected: { code: null, signal: 'SIGHUP' } },
  { name: "SIGTERM with README's recipe (once, before the first run)", mode: 'recipe', signal: 'SIGTERM', expected: { code: 0, signal: null } },
  { name: "SIGTERM with README's recipe (on, after the first run)", mode: 'recipe-after', signal: 'SIGTERM', expected: { code: 0, signal: null } },
  { name: 'SIGKILL (the keeper cleans up)', mode: 'wait', signal: 'SIGKILL', expected: { code: null, signal: 'SIGKILL' } },
];

onLinux('a host that ends leaves no process of its runs and no settings overlay (Linux: /proc scan)', () => {
  it.each(EXIT_PATHS)(
    '$name',
    async ({ mode, signal, expected }) => {
      const host = startHost([mode, '--no-agent-retry']);
      const pids = readyPids(await host.waitForLine(/^ready /));
      expect(pids.toolAlive).toBe(true);
      if (signal !== undefined) host.child.kill(signal);

      const exit = await host.exitWithin(EXIT_BOUND_MS);
      const survivors = await host.tag.waitUntilNone(SURVIVOR_BOUND_MS);
      const leftovers = await leftoversIn(host.scratch, performance.now() + 2_000);
      // One comparison, so that a failure shows every fact: the survivors by pid and name, the
      // scratch TMPDIR's leftovers (pi's settings overlay), and what the host's run emitted.
      expect({ exit, survivors, leftovers, ...(survivors.length > 0 ? { hostStderr: host.stderr() } : {}) }).toEqual({
        exit: expected,
        survivors: [],
        leftovers: [],
      });
    },
    TEST_TIMEOUT_MS,
  );

  // The known gap: with the keeper switched off, nothing watches a host that cannot run code.
  it('SIGKILL with AGENT_RX_KEEPER=off: the run outlives the host, and no keeper runs', async () => {
    const host = startHost(['wait'], { AGENT_RX_KEEPER: 'off' });
    const pids = readyPids(await host.waitForLine(/^ready /));
    host.child.kill('SIGKILL');
    expect(await host.exitWithin(EXIT_BOUND_MS)).toEqual({ code: null, signal: 'SIGKILL' });
    await delay(1_000);
    expect(host.tag.processes().map(({ pid }) => pid).sort()).toEqual([pids.agent, pids.tool].sort());
  });
});

// Resolves with everything `source` emitted and whether it completed, or after `ms` with what came.
function collectWithin<T>(source: Observable<T>, onValue: (value: T) => void, ms: number): Promise<{ values: T[]; completed: boolean }> {
  return new Promise((resolve) => {
    const values: T[] = [];
    const timer = setTimeout(() => {
      subscription.unsubscribe();
      resolve({ values, completed: false });
    }, ms);
    const subscription = source.subscribe({
      next: (value) => {
        values.push(value);
        onValue(value);
      },
      complete: () => {
        clearTimeout(timer);
        resolve({ values, completed: true });
      },
    });
  });
}

describe('stopAllRuns() with a subscriber still listening', () => {
  it('ends a cooperative pi run with exactly one terminal.failed (stopped), then completion, and its tool is gone', async () => {
    let toolPid = 0;
    let stopped: Promise<void> = Promise.resolve();
    const run = runPi({ prompt: 'run a tool', executable: process.execPath, executableArgs: [fixture('fake-agent-tool.mjs')], session: 'none' });
    const { values, completed } = await collectWithin<CliMessage>(
      run,
      (message) => {
        if (message.type !== 'tool.update') return;
        toolPid = (JSON.parse(message.output) as { toolPid: number }).toolPid;
        stopped = stopAllRuns();
      },
      10_000,
    );
    await stopped;
    if (toolPid !== 0 && isAlive(toolPid)) process.kill(toolPid, 'SIGKILL');
    const terminals = values.filter((message) => message.type === 'terminal.completed' || message.type === 'terminal.failed');
    expect({ completed, terminals: terminals.length, last: values.at(-1) }).toEqual({
      completed: true,
      terminals: 1,
      last: expect.objectContaining({ type: 'terminal.failed', reason: 'stopped' }) as unknown,
    });
    expect(toolPid).not.toBe(0);
    expect(isAlive(toolPid)).toBe(false);
  });

  it('ends a run whose process ignores SIGTERM and SIGINT with an exit item stoppedBy the host, then completion', async () => {
    let stopped: Promise<void> = Promise.resolve();
    let pid = 0;
    const run = processLines(process.execPath, [fixture('ignore-signals.mjs')], { gracePeriodMs: 200 });
    const { values, completed } = await collectWithin<ProcessItem>(
      run,
      (item) => {
        if (item.kind !== 'line' || !item.text.startsWith('ready ')) return;
        pid = Number(item.text.slice('ready '.length));
        stopped = stopAllRuns();
      },
      10_000,
    );
    await stopped;
    if (pid !== 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
    expect({ completed, exits: values.filter((item) => item.kind === 'exit').length, last: values.at(-1) }).toEqual({
      completed: true,
      exits: 1,
      last: expect.objectContaining({ kind: 'exit', stoppedBy: { kind: 'host' } }) as unknown,
    });
    expect(isAlive(pid)).toBe(false);
  });
});
