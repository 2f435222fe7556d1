import { isObservable, type Observable } from 'rxjs';
import type { StopCause } from './items.js';

/** How long the stop sequence waits after the interrupt before it kills the tree, unless told. */
export const DEFAULT_GRACE_PERIOD_MS = 2000;

/** Input for a process: fixed bytes, or a stream of chunks for a long-lived conversation. */
export type StdinSource = string | Uint8Array | Observable<string | Uint8Array>;

/** How to ask a process to stop before it is killed. */
export interface InterruptOptions {
  /** Signal sent to the root process; `null` sends none. */
  readonly signal?: NodeJS.Signals | null;
  /** Bytes written to stdin first, when stdin is still open (e.g. `'\u0003'`). */
  readonly stdin?: string | Uint8Array | null;
}

/** Options of `processLines`. */
export interface ProcessOptions {
  /** Working directory of the process. */
  readonly cwd?: string;
  /** Variables merged over `process.env`; `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * What the process reads. Without it stdin is closed from the start. A string or bytes are
   * written, then stdin is closed. An Observable is subscribed when the process starts: each value
   * is written as it comes, stdin is closed when it completes, and it is unsubscribed on stop.
   */
  readonly stdin?: StdinSource;
  /** The graceful interrupt. Default: `'\u0003'` on stdin if still open, then SIGINT. */
  readonly interrupt?: InterruptOptions;
  /** How long to wait after the interrupt before killing the tree. Default 2000. */
  readonly gracePeriodMs?: number;
  /** How long to wait for killed processes to disappear. Default 5000. */
  readonly killTimeoutMs?: number;
  /**
   * A limit on the whole run, in ms. When it runs out, the stop sequence runs and the stream ends
   * with an exit item whose `stoppedBy` is `{ kind: 'timeout', limit: 'run' }` (for the agent
   * sources: `terminal.failed` with reason `timeout`). Default: none.
   */
  readonly timeoutMs?: number;
  /**
   * A limit on silence, in ms: the longest time without any stdout output (`limit: 'idle'`).
   * Stderr does not count: an agent that only logs retries there is stalled. Default: none.
   */
  readonly idleTimeoutMs?: number;
  /** Lines longer than this (in bytes) are reported, not emitted. Default 32 MiB. */
  readonly maxLineBytes?: number;
  /**
   * How stdout lines are emitted: `'utf8'` (default) decodes each one into a `line` item's `text`;
   * `'buffer'` leaves it undecoded, as a `line-bytes` item holding the pieces the pipe delivered,
   * for a parser that needs only part of a long line (pi's byte parser, `parsePiBytes`).
   */
  readonly lineEncoding?: 'utf8' | 'buffer';
  /**
   * Also emit stderr as `stderr-line` items, for agents that report there what a dialect wants
   * (Gemini CLI's retries). Framed like stdout, with the same `maxLineBytes`. Default false.
   */
  readonly stderrLines?: boolean;
  /** How much of the end of stderr the exit item keeps. Default 64 KiB. */
  readonly stderrTailBytes?: number;
  /**
   * Called once the stop sequence or the clean-up after exit has finished, with what happened;
   * before the exit item (and so before the terminal message) of a run that is still listened to.
   */
  readonly onStopped?: (report: StopReport) => void;
}

/** What a run's stop sequence or clean-up did, for logs and tests. */
export interface StopReport {
  /** The root process's pid; `null` when it never started. */
  readonly pid: number | null;
  /** `true` when the run was stopped (unsubscribe, `stopAllRuns`, a time limit), `false` when it exited itself. */
  readonly requested: boolean;
  /** What stopped it: `unsubscribe`, `host` (`stopAllRuns()`), `timeout`; `null` when it exited itself. */
  readonly cause: 'unsubscribe' | StopCause['kind'] | null;
  /** Whether the root exited during the grace period (no SIGKILL needed for it). */
  readonly exitedGracefully: boolean;
  /** Pids that were sent SIGKILL. */
  readonly killed: readonly number[];
  /** Every process of the run was seen gone within `killTimeoutMs`. */
  readonly confirmed: boolean;
  /** Pids still alive when confirmation gave up. */
  readonly survivors: readonly number[];
  /** Milliseconds from the stop request (or the root's exit) to the end of the sequence. */
  readonly durationMs: number;
  /** Swallowed failures (EPIPE, ESRCH, a missing `ps`, ...). */
  readonly errors: readonly string[];
}

export interface ResolvedProcessOptions {
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>> | undefined;
  readonly stdin: StdinSource | undefined;
  readonly interrupt: { readonly signal: NodeJS.Signals | null; readonly stdin: string | Uint8Array | null };
  readonly gracePeriodMs: number;
  readonly killTimeoutMs: number;
  readonly timeoutMs: number | undefined;
  readonly idleTimeoutMs: number | undefined;
  readonly maxLineBytes: number;
  readonly lineEncoding: 'utf8' | 'buffer';
  readonly stderrLines: boolean;
  readonly stderrTailBytes: number;
  readonly onStopped: ((report: StopReport) => void) | undefined;
}

export const DEFAULT_INTERRUPT = { signal: 'SIGINT', stdin: '\u0003' } as const;

/** Validates options at call time: programmer errors throw `TypeError`, before anything spawns. */
export function resolveProcessOptions(command: unknown, args: unknown, options: ProcessOptions): ResolvedProcessOptions {
  if (typeof command !== 'string' || command.length === 0) {
    throw new TypeError('agent-rx: the command must be a non-empty string');
  }
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) {
    throw new TypeError('agent-rx: args must be an array of strings');
  }
  const stdin = options.stdin;
  if (stdin !== undefined && typeof stdin !== 'string' && !(stdin instanceof Uint8Array) && !isObservable(stdin)) {
    throw new TypeError('agent-rx: stdin must be a string, a Uint8Array or an Observable of them');
  }
  const interrupt = options.interrupt ?? DEFAULT_INTERRUPT;
  const signal = interrupt.signal === undefined ? DEFAULT_INTERRUPT.signal : interrupt.signal;
  if (signal !== null && (typeof signal !== 'string' || !/^SIG[A-Z0-9]+$/.test(signal))) {
    throw new TypeError(`agent-rx: interrupt.signal must be a signal name such as 'SIGTERM', got ${signal}`);
  }
  return {
    cwd: options.cwd,
    env: options.env,
    stdin,
    interrupt: { signal, stdin: interrupt.stdin === undefined ? DEFAULT_INTERRUPT.stdin : interrupt.stdin },
    gracePeriodMs: nonNegative('gracePeriodMs', options.gracePeriodMs, DEFAULT_GRACE_PERIOD_MS),
    killTimeoutMs: nonNegative('killTimeoutMs', options.killTimeoutMs, 5000),
    timeoutMs: limit('timeoutMs', options.timeoutMs),
    idleTimeoutMs: limit('idleTimeoutMs', options.idleTimeoutMs),
    maxLineBytes: positive('maxLineBytes', options.maxLineBytes, 32 * 1024 * 1024),
    lineEncoding: encoding(options.lineEncoding),
    stderrLines: flag('stderrLines', options.stderrLines),
    stderrTailBytes: nonNegative('stderrTailBytes', options.stderrTailBytes, 64 * 1024),
    onStopped: options.onStopped,
  };
}

function encoding(value: unknown): 'utf8' | 'buffer' {
  if (value === undefined || value === 'utf8' || value === 'buffer') return value ?? 'utf8';
  throw new TypeError(`agent-rx: lineEncoding must be 'utf8' or 'buffer', got ${JSON.stringify(value)}`);
}

function flag(name: string, value: boolean | undefined): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`agent-rx: ${name} must be a boolean, got ${String(value)}`);
  return value === true;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new TypeError(`agent-rx: ${name} must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}

// A time limit: absent, or a positive number of ms that a timer can hold (at most 2^31 - 1).
function limit(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value > 0) || value > MAX_TIMER_MS) {
    throw new TypeError(`agent-rx: ${name} must be a number of ms > 0 and <= ${MAX_TIMER_MS}, got ${String(value)}`);
  }
  return value;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new TypeError(`agent-rx: ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
