import { Observable, type OperatorFunction } from 'rxjs';
import { terminalFailed } from '../terminal-failed.js';
import type { CliMessage, OutputSchema, SessionMessage, TerminalCompleted, TerminalFailed, TurnCompleted, TurnFailed } from '../messages.js';
import { AnswerText } from './answer-text.js';
import { boundedAnswer, checkOutput, outputContract, outputFailureMessage, type OutputContract } from './output-schema.js';

/**
 * Follows the answer of one run or turn (its final text: the last model message, after the last
 * tool call; or the structured value the agent gave) and checks it against an `outputSchema` when
 * the run or turn ends.
 */
export class OutputWatch {
  readonly #contract: OutputContract;
  readonly #answer = new AnswerText();

  constructor(contract: OutputContract) {
    this.#contract = contract;
  }

  /** A content message of the run or turn. */
  see(message: CliMessage | SessionMessage): void {
    switch (message.type) {
      case 'assistant':
        this.#answer.append(message.text);
        return;
      case 'assistant.withdrawn':
        this.#answer.withdraw(message.text);
        return;
      case 'tool.call':
      case 'tool.update':
      case 'tool.completed':
      case 'tool.failed':
        this.#answer.tool();
        return;
      default:
        return;
    }
  }

  /**
   * A run's `terminal.completed` with the checked `output`, or a `terminal.failed` (`output-schema`)
   * with the issues and the answer. A value in the terminal's `output` (set by an agent that gives
   * structured output natively) is what is checked; else the final text.
   */
  completeRun(terminal: TerminalCompleted): TerminalCompleted | TerminalFailed {
    const text = this.#answer.finalText;
    const check = checkOutput(this.#contract, text, terminal.output === undefined ? undefined : { value: terminal.output });
    if (check.ok) return { ...terminal, output: check.output };
    // The agent ended its turn as it should (exit code 0): only the answer's shape is wrong.
    return terminalFailed('output-schema', outputFailureMessage(check.issues), {
      exitCode: 0,
      outputIssues: [...check.issues],
      answer: boundedAnswer(terminal.output === undefined ? text : JSON.stringify(terminal.output)),
      sessionId: terminal.sessionId,
    });
  }

  /**
   * A run's `terminal.failed` (`output-schema`) that its agent reported itself, without the issues
   * (Qwen Code, given the schema natively, ends the run when the model answers in prose): the issues
   * of the final text against the schema (one saying that no structured answer came, when the text
   * would pass) and the text as the answer.
   */
  failRun(terminal: TerminalFailed): TerminalFailed {
    if (terminal.outputIssues !== undefined) return terminal;
    const text = this.#answer.finalText;
    const check = checkOutput(this.#contract, text);
    const issues = check.ok ? [{ path: '', message: 'the agent gave no structured answer' }] : [...check.issues];
    return { ...terminal, message: `${outputFailureMessage(issues)} (${terminal.message})`, outputIssues: issues, answer: boundedAnswer(text) };
  }

  /** A session's `turn.completed` with the checked `output`, or a `turn.failed` (`output-schema`). */
  completeTurn(end: TurnCompleted): TurnCompleted | TurnFailed {
    const text = this.#answer.finalText;
    const check = checkOutput(this.#contract, text, end.output === undefined ? undefined : { value: end.output });
    if (check.ok) return { ...end, output: check.output };
    return {
      type: 'turn.failed',
      turn: end.turn,
      reason: 'output-schema',
      message: outputFailureMessage(check.issues),
      outputIssues: [...check.issues],
      answer: boundedAnswer(end.output === undefined ? text : JSON.stringify(end.output)),
    };
  }
}

/**
 * Checks a run's answer against `schema` at its `terminal.completed`: the terminal gets the parsed,
 * validated `output` (typed through a zod schema), or becomes `terminal.failed` (`output-schema`)
 * with the issues and the answer. Everything else passes as it is. Runs given `outputSchema` do
 * this already (and tell the agent the schema); this is for a stream read back from elsewhere, a
 * fleet run's or a recording's, whose agent was told it. Throws a `TypeError` now for a schema
 * that is neither zod nor JSON Schema.
 *
 * @example
 * const Verdict = z.object({ verdict: z.enum(['pass', 'fail']), reasons: z.array(z.string()) });
 * fromAgentEventSource(new EventSource('/runs/42/events')).pipe(checkRunOutput(Verdict), collectRun()).subscribe((result) => {
 *   if (result.ok) console.log(result.output.verdict);
 * });
 */
export function checkRunOutput<Output = unknown>(schema: OutputSchema<Output>): OperatorFunction<CliMessage, CliMessage<Output>> {
  return checkRunOutputWith(outputContract(schema)) as OperatorFunction<CliMessage, CliMessage<Output>>;
}

/** {@link checkRunOutput} with the schema made ready. */
export function checkRunOutputWith(contract: OutputContract): OperatorFunction<CliMessage, CliMessage> {
  return (source) =>
    new Observable<CliMessage>((subscriber) => {
      const watch = new OutputWatch(contract);
      return source.subscribe({
        next: (message) => {
          const ends = message.type === 'terminal.completed' || (message.type === 'terminal.failed' && message.reason === 'output-schema');
          if (!ends) {
            watch.see(message);
            subscriber.next(message);
            return;
          }
          let checked: CliMessage;
          try {
            // An agent that gave up on the schema itself: the issues from the final text, where it did not say them.
            checked = message.type === 'terminal.completed' ? watch.completeRun(message) : watch.failRun(message);
          } catch (error: unknown) {
            // The caller's schema threw (a refine of its own): the caller's error, in the error channel.
            subscriber.error(error);
            return;
          }
          subscriber.next(checked);
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          subscriber.complete();
        },
      });
    });
}
