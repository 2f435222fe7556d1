import type { CliMessage, ToolContent } from '../../messages.js';

interface Call {
  readonly name: string;
  lastOutput: string;
  done: boolean;
}

/**
 * A run's tool-call bookkeeping, the same for every agent: each call is announced once
 * (`tool.call`), its partial output is sent only when it changed (`tool.update`, which replaces),
 * and its result once (`tool.completed` / `tool.failed`). A result or an update for a call never
 * announced announces it first, with a `null` input. Create one per run (in `createState`).
 */
export class ToolCalls {
  readonly #calls = new Map<string, Call>();

  /** The agent decided to call a tool; `[]` when this call was announced already. */
  call(toolCallId: string, name: string, input: unknown): CliMessage[] {
    if (this.#calls.has(toolCallId)) return [];
    this.#calls.set(toolCallId, { name, lastOutput: '', done: false });
    return [{ type: 'tool.call', toolCallId, name, input: input ?? null }];
  }

  /** Partial output so far; `[]` when it did not change or the call has its result. */
  update(toolCallId: string, name: string, output: string): CliMessage[] {
    const known = this.#calls.get(toolCallId);
    if (known?.done === true || output === (known?.lastOutput ?? '')) return [];
    const messages = this.call(toolCallId, name, undefined);
    (this.#calls.get(toolCallId) as Call).lastOutput = output;
    return [...messages, { type: 'tool.update', toolCallId, name, output }];
  }

  /**
   * The call's result; `[]` when it had one already. `name` defaults to the announced one.
   * `content` (images, diffs) goes into a `tool.completed` when there is any.
   */
  result(toolCallId: string, name: string | undefined, output: string, failed: boolean, content?: readonly ToolContent[]): CliMessage[] {
    if (this.#calls.get(toolCallId)?.done === true) return [];
    const messages = this.call(toolCallId, name ?? 'unknown', undefined);
    const call = this.#calls.get(toolCallId) as Call;
    call.done = true;
    if (failed) return [...messages, { type: 'tool.failed', toolCallId, name: name ?? call.name, output }];
    return [...messages, { type: 'tool.completed', toolCallId, name: name ?? call.name, output, ...(content === undefined || content.length === 0 ? {} : { content: [...content] }) }];
  }

  /** Whether any tool was announced. */
  get used(): boolean {
    return this.#calls.size > 0;
  }
}
