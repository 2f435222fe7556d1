import type { BudgetExceeded } from '../messages.js';

/** One LF-framed line of the child's stdout (a trailing CR removed). */
export interface ProcessLine {
  readonly kind: 'line';
  readonly text: string;
}

/**
 * One LF-framed line of the child's stdout, undecoded (a trailing CR removed): what `processLines`
 * emits instead of `line` with `lineEncoding: 'buffer'`, for a parser that reads bytes. The line
 * comes in the pieces the pipe delivered it, without a copy: `Buffer.concat(chunks)` joins them.
 * The pieces are views of the pipe's buffers; they are never written again.
 */
export interface ProcessLineBytes {
  readonly kind: 'line-bytes';
  readonly chunks: readonly Buffer[];
}

/**
 * A stdout line longer than `maxLineBytes`. Only its length and a short head are kept; the rest
 * was discarded as it arrived, and the stream goes on with the next line.
 */
export interface ProcessOverlongLine {
  readonly kind: 'line-too-long';
  /** Length of the whole line in bytes (without the LF). */
  readonly bytes: number;
  /** The first bytes of the line, decoded as UTF-8. */
  readonly head: string;
}

/**
 * One LF-framed line of the child's stderr (a trailing CR removed), emitted only with the
 * `stderrLines` option, in the order the pipes delivered it among the stdout lines. A line longer
 * than `maxLineBytes` comes as its head. Stderr is still kept as the exit item's bounded tail.
 */
export interface ProcessStderrLine {
  readonly kind: 'stderr-line';
  readonly text: string;
}

/** Why a run could not start, and at which stage. */
export interface StartFailure {
  /**
   * `spawn`: the executable is missing or not runnable, or `cwd` is not a folder (ENOENT, EACCES,
   * ENOTDIR, …); `setup`: what a source prepares before its process could not be made (pi's
   * settings overlay); `input`: a source that is not a process could not read its input (a
   * recording).
   */
  readonly stage: 'spawn' | 'setup' | 'input';
  /** The error code (`ENOENT`, …), or a code the library names (`ESETUP`). */
  readonly code: string;
  readonly message: string;
  /**
   * What the file system says is wrong, for a spawn that failed with ENOENT, EACCES or ENOTDIR;
   * absent when it cannot tell (say, a script whose `#!` interpreter is missing).
   */
  readonly problem?: SpawnProblem;
}

/**
 * Why a program could not be started, as the file system shows it:
 * - `not-on-path`: a program name (no folder in it), looked up on PATH and not found there
 *   runnable;
 * - `missing`, `not-executable`, `directory`: a path to the program (absolute, or resolved against
 *   the run's `cwd`) that does not exist, is a file without execute permission, or is a directory;
 * - `missing-cwd`, `cwd-not-directory`: the run's `cwd`, whatever the program.
 */
export type SpawnProblem =
  | { readonly kind: 'not-on-path'; readonly program: string }
  | { readonly kind: 'missing' | 'not-executable' | 'directory'; readonly path: string }
  | { readonly kind: 'missing-cwd' | 'cwd-not-directory'; readonly cwd: string };

/**
 * Why the library stopped a run that a subscriber still listens to: the host called
 * `stopAllRuns()`, a time limit ran out, or a budget was spent. (A run stopped by unsubscribing has no listener left.)
 */
export type StopCause =
  | { readonly kind: 'host' }
  | {
      readonly kind: 'timeout';
      /**
       * `run`: the whole run took `timeoutMs`; `idle`: no stdout output for `idleTimeoutMs`;
       * `abort` and `end`: a session's agent did not end its turn after an abort, or did not exit
       * after the end of its input, within `gracePeriodMs`.
       */
      readonly limit: 'run' | 'idle' | 'abort' | 'end';
      readonly ms: number;
    }
  /** The caller's budget was spent (see `budget`): which limit, and the figures. */
  | { readonly kind: 'budget'; readonly exceeded: BudgetExceeded };

/**
 * The last item of every run: how it ended. `processLines` gives it when its process is gone (or
 * could not start); sources that are not processes (a recording) and what a source prepares
 * before its process (pi's settings overlay) give one too, saying at which stage they failed.
 */
export interface ProcessExit {
  readonly kind: 'exit';
  /** Exit code, or `null` when the process was killed by a signal or never started. */
  readonly exitCode: number | null;
  /** The signal that ended the process, or `null`. */
  readonly signal: NodeJS.Signals | null;
  /** The end of stderr, at most `stderrTailBytes` bytes, decoded as UTF-8. */
  readonly stderr: string;
  /** How many bytes at the start of stderr were dropped to keep the tail bounded. */
  readonly stderrTruncatedBytes: number;
  /** Set when the run could not start; then no line was emitted before this item. */
  readonly startError: StartFailure | null;
  /** The child's pid, when it started. */
  readonly pid: number | null;
  /** Milliseconds from spawn to exit. */
  readonly durationMs: number;
  /** Set when the library stopped the process (stop sequence) while the subscriber listened. */
  readonly stoppedBy?: StopCause;
}

/**
 * What `processLines` emits: lines (as text, or as bytes with `lineEncoding: 'buffer'`), overlong-line
 * markers, stderr lines when asked for, and one final exit item.
 */
export type ProcessItem = ProcessLine | ProcessLineBytes | ProcessOverlongLine | ProcessStderrLine | ProcessExit;
