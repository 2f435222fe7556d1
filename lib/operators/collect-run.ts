import { defer, fromEvent, isObservable, map, NEVER, reduce, takeUntil, takeWhile, type Observable, type OperatorFunction } from 'rxjs';
import { isTerminal, type CliMessage, type TerminalCompleted, type TerminalFailed, type TerminalMessage, type Usage } from '../messages.js';
import { AnswerText } from './answer-text.js';
import { isObject, property, shown } from './validate.js';

/** Where a tool call stands: `running` until its `tool.completed` (`completed`) or `tool.failed` (`failed`). */
export type RunToolCallStatus = 'running' | 'completed' | 'failed';

/** One tool call of a run, as its `tool.*` messages left it. */
export interface RunToolCall {
  readonly toolCallId: string;
  /** The tool's name, as the agent reported it. */
  readonly name: string;
  /** The tool's input, as the agent reported it in `tool.call` (`undefined` when only its update or result was seen). */
  readonly input: unknown;
  /** `running` when the run ended before the tool's result (the run was cut off mid-tool). */
  readonly status: RunToolCallStatus;
  /**
   * The tool's output: the result's (`tool.completed`, `tool.failed`) once there is one; while it
   * runs, the last `tool.update`'s (partial output replaces, it is never appended); `undefined`
   * while it runs and no update came.
   */
  readonly output: string | undefined;
}

/** What one attempt of a run produced. */
export interface RunOutput {
  /**
   * The whole answer, to show or log: the text of every model message of the run, in order, each
   * character once (every `assistant` delta appended, each `assistant.withdrawn` taken back from
   * the end), with the messages kept apart by a blank line (`\n\n`, less the line breaks already
   * there). A new model message begins with the first text after a tool message (`tool.call`,
   * `tool.update`, `tool.completed`, `tool.failed`) that followed text: "Let me run the
   * tests.\n\nAll 12 tests pass." Empty messages add nothing; no separator leads or trails.
   */
  readonly text: string;
  /**
   * The final answer: the text of the last model message, the one after the run's last tool
   * call (the whole `text` when no tool ran). Empty when the run's last tool message came after
   * all its text (a run cut off, or ended at a turn limit, while tools ran).
   */
  readonly finalText: string;
  /** Every `assistant.thought` text, in order (each is a turn's whole thinking). */
  readonly thoughts: readonly string[];
  /** One entry per tool call, in the order the calls were first seen. */
  readonly toolCalls: readonly RunToolCall[];
  /** Every `agent.warning` message, in order (problems the agent reported that did not end the run). */
  readonly warnings: readonly string[];
  /** The agent's session id: the terminal's when it has one, else the last `session.started`/`session.resumed`. */
  readonly sessionId: string | undefined;
}

/** An attempt that `retryAgentRun` gave up on: what it produced, and the failure that was retried. */
export interface RunAttempt extends RunOutput {
  /** The attempt's `terminal.failed`, as `run.retrying` carried it (the retry swallowed it from the stream). */
  readonly failure: TerminalFailed;
}

/** What every {@link RunResult} holds, whatever its status. */
export interface BaseRunResult extends RunOutput {
  /** The run's token usage: the `terminal.completed`'s (summed over the last attempt's model calls); `undefined` when it reported none, or the run did not complete. */
  readonly usage: Usage | undefined;
  /** How many attempts the run took: 1, plus one for every `run.retrying`. */
  readonly attempts: number;
  /** The attempts before the last one, in order (empty without retries); `text`, `finalText`, `toolCalls` etc. are the last attempt's. */
  readonly previousAttempts: readonly RunAttempt[];
}

/** A run that ended with `terminal.completed`. */
export interface CompletedRunResult<Output = unknown> extends BaseRunResult {
  readonly status: 'completed';
  /**
   * With `outputSchema`: the answer, parsed and validated (the terminal's `output`), typed through
   * a zod schema. `undefined` for a run without one.
   */
  readonly output: Output;
  /** `true`: the run completed (its `terminal.stopReason` says how: `end_turn`, `max_tokens`, …). */
  readonly ok: true;
  readonly terminal: TerminalCompleted<Output>;
}

/** A run that ended with `terminal.failed`. */
export interface FailedRunResult extends BaseRunResult {
  readonly status: 'failed';
  readonly ok: false;
  /** Why it failed: `reason`, a human-readable `message`, and the diagnostics. */
  readonly terminal: TerminalFailed;
}

/**
 * A stream that completed without a terminal message: never a whole run (a run that is not
 * unsubscribed always ends with one), but a run cut short upstream, e.g. by `takeUntil`, `take`
 * or a truncated recording. The fields hold what came before the cut.
 */
export interface IncompleteRunResult extends BaseRunResult {
  readonly status: 'incomplete';
  readonly ok: false;
  readonly terminal: undefined;
}

/**
 * A whole run folded into one value: its answer, thoughts, tool calls, usage and terminal message.
 * Discriminated by `status` (or `ok`): `if (result.ok)` narrows `terminal` to `terminal.completed`.
 */
export type RunResult<Output = unknown> = CompletedRunResult<Output> | FailedRunResult | IncompleteRunResult;

/**
 * Folds a run into one {@link RunResult}, emitted when the run ends: the answer (`text`, every
 * model message kept apart by a blank line, and `finalText`, the last message: the answer after
 * the last tool call), the thoughts, one entry per tool call with its input, status and output,
 * the usage, the session id, and the terminal message itself. For callers who want one result,
 * not a stream.
 *
 * - **At the terminal message** it emits the result and completes, unsubscribing from the source
 *   (anything a source sent after its terminal would break the contract; it is not read). For a
 *   source that keeps the contract this is the moment it completes.
 * - **A failure is a result**, not an error: `terminal.failed` gives `status: 'failed'`,
 *   `ok: false`, with the failure in `terminal`. The stream errors only when the source errors
 *   (with the source's error, and no result).
 * - **A source that completes without a terminal** (a run cut short upstream by `takeUntil` or
 *   `take`, a truncated recording; an empty source too) gives a result with
 *   `status: 'incomplete'`, `ok: false`, `terminal: undefined`, holding what came before. So
 *   `collectRun()` always emits exactly one value when its source completes, like `toArray()`.
 * - **Unsubscribing** before the end emits nothing (and, for a process source, stops the run).
 * - **Retries**: at each `run.retrying` (from `retryAgentRun`) the failed attempt's text and
 *   final text, thoughts, tool calls, warnings and session id are moved to `previousAttempts`, with the
 *   retried failure, and the result's fields start again for the new attempt; `attempts` counts
 *   them. Put `collectRun()` after `retryAgentRun()`.
 *
 * Every subscription folds its own run: nothing is shared between subscribers.
 *
 * ```
 * source:  -s-a-b-t-u-c-d-(e|)    s = session.started, a/b = assistant "Let me ", "look.", t = tool.call,
 * result:  ---------------(r|)    u = tool.completed, c/d = assistant "Fou", "nd it.", e = terminal.completed,
 *                                 r = the RunResult: { status: 'completed', ok: true, text: 'Let me look.\n\nFound it.',
 *                                 finalText: 'Found it.', toolCalls: [t+u], terminal: e, … }
 *
 * source:  -a-r-b-(c|)            r = run.retrying (attempt 2)
 * result:  -------(R|)            R = { text: b, attempts: 2, previousAttempts: [{ text: a, failure: r.failure }], … }
 *
 * source:  -a-a-|                 (no terminal)
 * result:  -----(R|)              R = { status: 'incomplete', ok: false, terminal: undefined, text: aa, … }
 * ```
 *
 * @example
 * runPi({ prompt: 'Summarise README.md' })
 *   .pipe(retryAgentRun(), collectRun())
 *   .subscribe((result) => {
 *     if (result.ok) console.log(result.finalText, result.usage);
 *     else console.error(result.terminal?.message ?? 'the run was cut short');
 *   });
 */
export function collectRun<Output = unknown>(): OperatorFunction<CliMessage<Output>, RunResult<Output>> {
  return (source) =>
    defer(() => {
      // Fresh for every subscription.
      const fold = new RunFold();
      return source.pipe(
        takeWhile((message) => !isTerminal(message), true),
        reduce((state, message) => state.add(message), fold),
        map((state) => state.result() as RunResult<Output>),
      );
    });
}

/** Options of {@link collectRunResult}. */
export interface CollectRunResultOptions {
  /**
   * Cancels the run: on `abort` the run is unsubscribed (for a process source: the stop
   * sequence, as for any unsubscribe; during a `retryAgentRun` wait: no further attempt) and the
   * promise rejects with `signal.reason` (an `AbortError` `DOMException` unless `abort()` was given
   * a reason), as `fetch` does. A signal already aborted rejects at once, and the run is never
   * subscribed (nothing spawns).
   */
  readonly signal?: AbortSignal;
  /**
   * Reject with a {@link RunFailedError} (carrying the result and its terminal) when the run did
   * not complete: it failed, or its stream ended without a terminal message. Default `false`:
   * the promise resolves with every result, a failed one included (`ok: false`), as the stream
   * reports failures in-band.
   */
  readonly throwOnFailure?: boolean;
}

/**
 * Thrown (as the rejection of {@link collectRunResult} with `throwOnFailure`) for a run that did
 * not complete: it ended with `terminal.failed`, or without a terminal message at all.
 *
 * @example
 * try {
 *   const { text } = await collectRunResult(runPi({ prompt }), { throwOnFailure: true });
 *   console.log(text);
 * } catch (error) {
 *   if (!(error instanceof RunFailedError)) throw error;
 *   console.error(error.message, error.result.text); // the failure, and the text the run gave before it
 * }
 */
export class RunFailedError extends Error {
  override readonly name = 'RunFailedError';
  /** The run's result: all it produced, with its status. */
  readonly result: FailedRunResult | IncompleteRunResult;
  /** The run's `terminal.failed`; `undefined` when its stream ended without a terminal message. */
  readonly terminal: TerminalFailed | undefined;

  /**
   * An error for a run that did not complete; its message says why (the failure's reason and message).
   *
   * @param result The result of a run that did not complete.
   */
  constructor(result: FailedRunResult | IncompleteRunResult) {
    super(
      result.terminal === undefined
        ? 'agent-rx: the run ended without a terminal message'
        : `agent-rx: the run failed (${result.terminal.reason}): ${result.terminal.message}`,
    );
    this.result = result;
    this.terminal = result.terminal;
  }
}

/**
 * Subscribes to a run, waits for its end and resolves with its {@link RunResult}: `collectRun()`
 * as a promise, the way `lastValueFrom` turns an Observable into one. Subscribing starts the run (a cold source
 * spawns its agent now), and the subscription ends with the run.
 *
 * - Resolves with every result by default, a failed one included (`result.ok === false`, the
 *   failure in `result.terminal`); with `throwOnFailure: true` a run that did not complete rejects
 *   with a {@link RunFailedError}, and the promise's type narrows to a completed result.
 * - Rejects with the source's error if it errors (sources do not error for what the agent or the
 *   OS did).
 * - With `signal`, aborting unsubscribes (the stop sequence runs) and rejects with
 *   `signal.reason`; the partial result is not given. To keep what a cancelled run produced, use
 *   the operator: `run.pipe(takeUntil(fromEvent(signal, 'abort')), collectRun())` gives a result
 *   with `status: 'incomplete'`. After the promise settles, the signal is let go (its listener is
 *   removed), so one signal can serve many runs. For a time limit, prefer the run's own
 *   `timeoutMs`: it ends the run in-band, with a result (`terminal.failed`, reason `timeout`).
 *
 * A `run` that is not an Observable, or options of the wrong types, throw a `TypeError` when it
 * is called.
 *
 * @param run The run, e.g. `runPi(options)`, or `runPi(options).pipe(retryAgentRun())`.
 * @param options `signal` (cancels the run) and `throwOnFailure`.
 * @returns The run's result once it ended.
 *
 * @example
 * // `request.signal`: aborted when the caller goes away (the agent is then stopped).
 * const result = await collectRunResult(runPi({ prompt: 'Add a test for parseConfig' }).pipe(retryAgentRun()), {
 *   signal: request.signal,
 * });
 * if (result.ok) console.log(result.text);
 * else console.error(`${result.terminal?.reason}: ${result.terminal?.message}`);
 *
 * @example
 * // Failures as rejections: the result is then a completed one.
 * const { text, usage } = await collectRunResult(runPi({ prompt }), { throwOnFailure: true });
 */
export function collectRunResult<Output = unknown>(run: Observable<CliMessage<Output>>, options: CollectRunResultOptions & { readonly throwOnFailure: true }): Promise<CompletedRunResult<Output>>;
/**
 * Subscribes to a run, waits for its end and resolves with its {@link RunResult}, a failed run
 * included; see the signature above for the details.
 *
 * @param run The run, e.g. `runPi(options)`, or `runPi(options).pipe(retryAgentRun())`.
 * @param options `signal` (cancels the run) and `throwOnFailure`.
 * @returns The run's result once it ended.
 */
export function collectRunResult<Output = unknown>(run: Observable<CliMessage<Output>>, options?: CollectRunResultOptions): Promise<RunResult<Output>>;
export function collectRunResult<Output = unknown>(run: Observable<CliMessage<Output>>, options: CollectRunResultOptions = {}): Promise<RunResult<Output>> {
  if (!isObservable(run)) throw new TypeError(`agent-rx: collectRunResult takes an Observable of CliMessage; got ${shown(run)}`);
  if (!isObject(options)) throw new TypeError(`agent-rx: collectRunResult takes an options object; got ${shown(options)}`);
  const { signal, throwOnFailure = false } = options;
  if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError(`agent-rx: signal must be an AbortSignal; got ${shown(signal)}`);
  if (typeof throwOnFailure !== 'boolean') throw new TypeError(`agent-rx: throwOnFailure must be a boolean; got ${shown(throwOnFailure)}`);

  return new Promise<RunResult<Output>>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(abortReason(signal));
      return;
    }
    let settled = false;
    // takeUntil listens before the run starts, so an abort while a synchronous source is being
    // subscribed ends it too; its listener goes when the stream ends, however it ends.
    const aborted = signal === undefined ? NEVER : fromEvent(signal, 'abort');
    collectRun<Output>()(run)
      .pipe(takeUntil(aborted))
      .subscribe({
        next: (result) => {
          settled = true;
          if (throwOnFailure && !result.ok) reject(new RunFailedError(result));
          else resolve(result);
        },
        error: (error: unknown) => {
          settled = true;
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the source's error, as it is (as lastValueFrom does)
          reject(error);
        },
        // collectRun always emits before it completes: a completion without a result is the abort.
        complete: () => {
          if (!settled) reject(abortReason(signal));
        },
      });
  });
}

interface ToolCallState {
  toolCallId: string;
  name: string;
  input: unknown;
  status: RunToolCallStatus;
  output: string | undefined;
}

// One run's state; `add` updates it and returns it (a `reduce` accumulator).
class RunFold {
  #answer = new AnswerText();
  #thoughts: string[] = [];
  #toolCalls = new Map<string, ToolCallState>();
  #warnings: string[] = [];
  #sessionId: string | undefined;
  #terminal: TerminalMessage | undefined;
  readonly #previous: RunAttempt[] = [];

  add(message: CliMessage): this {
    switch (message.type) {
      case 'session.started':
      case 'session.resumed':
        this.#sessionId = message.sessionId;
        break;
      case 'assistant':
        this.#answer.append(message.text);
        break;
      case 'assistant.withdrawn':
        // The answer so far ends with the withdrawn text.
        this.#answer.withdraw(message.text);
        break;
      case 'assistant.thought':
        this.#thoughts.push(message.text);
        break;
      case 'tool.call': {
        this.#answer.tool();
        const call = this.#toolCalls.get(message.toolCallId);
        if (call === undefined) {
          this.#toolCalls.set(message.toolCallId, { toolCallId: message.toolCallId, name: message.name, input: message.input, status: 'running', output: undefined });
        } else {
          call.name = message.name;
          call.input = message.input;
        }
        break;
      }
      case 'tool.update': {
        this.#answer.tool();
        const call = this.#toolCall(message.toolCallId, message.name);
        // A late update does not undo a result.
        if (call.status === 'running') call.output = message.output;
        break;
      }
      case 'tool.completed':
      case 'tool.failed': {
        this.#answer.tool();
        const call = this.#toolCall(message.toolCallId, message.name);
        call.status = message.type === 'tool.completed' ? 'completed' : 'failed';
        call.output = message.output;
        break;
      }
      case 'agent.warning':
        this.#warnings.push(message.message);
        break;
      case 'run.retrying':
        this.#previous.push({ ...this.#output(), failure: message.failure });
        this.#answer = new AnswerText();
        this.#thoughts = [];
        this.#toolCalls = new Map();
        this.#warnings = [];
        this.#sessionId = undefined;
        break;
      case 'terminal.completed':
      case 'terminal.failed':
        this.#terminal = message;
        if (message.sessionId !== undefined) this.#sessionId = message.sessionId;
        break;
      case 'agent.retry':
        // The agent retries within the attempt: its deltas already say what the answer is.
        break;
    }
    return this;
  }

  result(): RunResult {
    const base: BaseRunResult = {
      ...this.#output(),
      usage: this.#terminal?.type === 'terminal.completed' ? this.#terminal.usage : undefined,
      attempts: this.#previous.length + 1,
      previousAttempts: [...this.#previous],
    };
    const terminal = this.#terminal;
    if (terminal === undefined) return { ...base, status: 'incomplete', ok: false, terminal: undefined };
    if (terminal.type === 'terminal.completed') return { ...base, status: 'completed', ok: true, terminal, output: terminal.output };
    return { ...base, status: 'failed', ok: false, terminal };
  }

  // A call whose `tool.call` was not seen is still listed, without its input.
  #toolCall(toolCallId: string, name: string): ToolCallState {
    let call = this.#toolCalls.get(toolCallId);
    if (call === undefined) {
      call = { toolCallId, name, input: undefined, status: 'running', output: undefined };
      this.#toolCalls.set(toolCallId, call);
    }
    return call;
  }

  #output(): RunOutput {
    return {
      text: this.#answer.text,
      finalText: this.#answer.finalText,
      thoughts: [...this.#thoughts],
      toolCalls: [...this.#toolCalls.values()].map((call): RunToolCall => ({ ...call })),
      warnings: [...this.#warnings],
      sessionId: this.#sessionId,
    };
  }
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    isObject(value) &&
    typeof property(value, 'aborted') === 'boolean' &&
    typeof property(value, 'addEventListener') === 'function' &&
    typeof property(value, 'removeEventListener') === 'function'
  );
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return (reason ?? new DOMException('This operation was aborted', 'AbortError')) as Error;
}
