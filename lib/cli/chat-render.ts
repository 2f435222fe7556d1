import type { InputAccepted, InputDropped, TerminalMessage, TurnFailed, Usage } from '../messages.js';
import type { Palette } from './ansi.js';
import { formatDuration, oneLine, plural, truncate } from './format.js';
import type { Renderer } from './render.js';
import { Spinner } from './spinner.js';

/** Input and output tokens of a turn, or of the session so far. */
export interface TokenCount {
  readonly input: number;
  readonly output: number;
}

/** The session's tokens so far, with a turn's usage added (a turn without usage adds nothing). */
export function addTokens(total: TokenCount, usage: Usage | undefined): TokenCount {
  return usage === undefined ? total : { input: total.input + usage.inputTokens, output: total.output + usage.outputTokens };
}

/** What the chat says for an `input.accepted`: a steer, a queued follow-up, an abort; nothing for a new turn. */
export function acceptedNote(message: InputAccepted, c: Palette): string | undefined {
  switch (message.as) {
    case 'steer':
      return c.cyan(`↳ steered into turn ${message.turn}`);
    case 'follow-up':
      return c.dim(`queued for after turn ${message.turn}`);
    case 'abort':
      return c.yellow(`⏹ aborting turn ${message.turn}`);
    case 'permission':
      return undefined;
    case 'turn':
      return undefined;
  }
}

/** What the chat says for an `input.dropped`: what was not sent, and why. */
export function droppedNote(message: InputDropped, c: Palette): string {
  const what = message.text === undefined ? (message.requestId === undefined ? message.kind : `${message.kind} ${message.requestId}`) : `${message.kind} ${JSON.stringify(truncate(oneLine(message.text), 60))}`;
  return c.yellow(`⚠ not sent: ${what} · ${message.reason}: ${oneLine(message.message)}`);
}

/** `✗ turn 2 aborted: …` or `✗ turn 2 failed · agent-error: …`, with the agent's error when the message lacks it. */
export function turnFailedLine(message: TurnFailed, c: Palette): string {
  const how = message.reason === 'aborted' ? `${c.bold(`✗ turn ${message.turn} aborted`)}:` : `${c.bold(`✗ turn ${message.turn} failed`)} · ${message.reason}:`;
  const detail = message.agentError !== undefined && !message.message.includes(message.agentError) ? ` (${truncate(oneLine(message.agentError), 200)})` : '';
  const status = message.httpStatus === undefined ? '' : ` · HTTP ${message.httpStatus}`;
  return c.red(`${how} ${truncate(oneLine(message.message), 300)}${detail}${status}`);
}

/**
 * The status line after a turn: `── turn 2 · 210 in / 16 out · session 420 in / 32 out · 1.4s`; a
 * turn the agent reported no usage for says so.
 */
export function statusLine(turn: number, usage: Usage | undefined, session: TokenCount, elapsedMs: number, c: Palette): string {
  const tokens = usage === undefined ? 'no usage' : `${usage.inputTokens} in / ${usage.outputTokens} out`;
  return c.dim(`── turn ${turn} · ${tokens} · session ${session.input} in / ${session.output} out · ${formatDuration(elapsedMs)}`);
}

/**
 * The session's end: its terminal as `agent-rx run` shows a run's, named a session's, with the
 * turn count. `renderer` is the one that showed the session's `session.*` messages.
 */
export function sessionEnd(renderer: Renderer, message: TerminalMessage, turns: number, elapsedMs: number): string {
  const text = renderer.render(message, elapsedMs);
  const done = message.type === 'terminal.completed' ? '✓ completed' : '✗ failed';
  return text.replace(done, `${done.replace(' ', ' session ')} · ${plural(turns, 'turn')}`);
}

/** What the screen needs of a readline interface on a terminal (node:readline's `Interface`). */
export interface ChatInput {
  readonly line: string;
  /**
   * How many rows below the input's start readline believes the cursor is (node:readline keeps it
   * as a plain property; its own redraw moves up that many). Pasted text is written without a
   * redraw, so it can lag behind `getCursorPos().rows`.
   */
  readonly prevRows?: number;
  getCursorPos(): { readonly rows: number; readonly cols: number };
  setPrompt(prompt: string): void;
  prompt(preserveCursor?: boolean): void;
}

/**
 * The chat's terminal: streamed output, and at the bottom, when shown, the input row that readline
 * edits (the prompt and what is typed so far). While the input row is shown, output goes above it
 * whole lines at a time (an unfinished line waits until it ends, fills a row, or the row goes), so
 * that typed text and the answer never run into each other. Without an input (stdin or stdout not
 * a terminal), output is written as it comes.
 */
export class ChatScreen {
  readonly #write: (text: string) => void;
  readonly #input: ChatInput | null;
  readonly #columns: () => number;
  readonly #spinner: Spinner | null;
  #shown = false;
  /** Output written directly ended with a line break (or nothing was written). */
  #atLineStart = true;
  /** The unfinished output line held back while the input row is shown. */
  #held = '';

  constructor(write: (text: string) => void, input: ChatInput | null, columns: () => number = () => 80) {
    this.#write = write;
    this.#input = input;
    this.#columns = columns;
    this.#spinner = input === null ? null : new Spinner(write);
  }

  /** Whether the input row is on screen. */
  get inputShown(): boolean {
    return this.#shown;
  }

  /** Output as it streams: any text, whole lines or not. */
  text(text: string): void {
    if (text === '') return;
    if (this.#shown) this.#above(text);
    else this.#direct(text);
  }

  /** A line of its own: after a line break if the output is in the middle of one. */
  line(text: string): void {
    if (this.#shown) this.#above(`${this.#held === '' ? '' : '\n'}${text}\n`);
    else this.#direct(`${this.#atLineStart ? '' : '\n'}${text}\n`);
  }

  /** Shows the input row with `prompt` (or gives the shown one that prompt), below the output. */
  showInput(prompt: string): void {
    const input = this.#input;
    if (input === null) return;
    if (this.#shown) {
      const rows = this.#clearInput(input);
      input.setPrompt(prompt);
      this.#redrawInput(input, rows);
      return;
    }
    this.#spinner?.stop();
    // The row goes below the output; an unfinished output line is left as it is, and its rest
    // comes on a line of its own.
    if (!this.#atLineStart) this.#write('\n');
    this.#atLineStart = true;
    this.#shown = true;
    input.setPrompt(prompt);
    input.prompt(true);
  }

  /**
   * The input row was sent (Enter): readline has moved to the next row and left the row above as
   * it was. Output goes on below it again, starting with what was held back.
   */
  inputSent(): void {
    if (!this.#shown) return;
    this.#shown = false;
    this.#atLineStart = true;
    const held = this.#held;
    this.#held = '';
    this.#direct(held);
  }

  /** An empty input row was sent (Enter on nothing while a turn runs): it is erased, nothing stays of it. */
  inputDiscarded(): void {
    if (!this.#shown) return;
    // readline has moved to the row below: back up and erase the prompt.
    this.#write('\u001b[1A\r\u001b[2K');
    this.inputSent();
  }

  /** The input is closed (Ctrl-D, the end of the session): an empty input row is erased, a typed one kept. */
  inputClosed(): void {
    const input = this.#input;
    if (input === null || !this.#shown) return;
    if (input.line === '') this.#clearInput(input);
    else this.#write('\n');
    this.#shown = false;
    this.#atLineStart = true;
    const held = this.#held;
    this.#held = '';
    this.#direct(held);
  }

  /** Shows `label` with a spinner while nothing else is written, if the output is at a line start and the input row is not shown. */
  waiting(label: string): void {
    if (!this.#shown && this.#atLineStart) this.#spinner?.start(label);
  }

  /** Stops the spinner, if any. */
  stopWaiting(): void {
    this.#spinner?.stop();
  }

  #direct(text: string): void {
    if (text === '') return;
    this.#spinner?.stop();
    this.#write(text);
    this.#atLineStart = text.endsWith('\n');
  }

  // Whole lines go above the input row: the row is erased, the lines written, the row redrawn.
  #above(text: string): void {
    const input = this.#input;
    if (input === null) return;
    const all = this.#held + text;
    const cut = all.lastIndexOf('\n') + 1;
    let lines = all.slice(0, cut);
    let rest = all.slice(cut);
    // An unfinished line as wide as the terminal is a row already: it need not wait. (Only plain
    // text is cut; styled text waits for its line break.)
    const width = this.#columns();
    if (width > 0 && !rest.includes('\u001b')) {
      const chars = Array.from(rest);
      while (chars.length >= width) lines += `${chars.splice(0, width).join('')}\n`;
      rest = chars.join('');
    }
    this.#held = rest;
    if (lines === '') return;
    const rows = this.#clearInput(input);
    this.#write(lines);
    this.#redrawInput(input, rows);
  }

  // Moves to the start of the input row and erases it and everything below; returns how many rows
  // below its start readline believes the cursor is (its own redraw moves up that many first).
  #clearInput(input: ChatInput): number {
    const { rows, cols } = input.getCursorPos();
    const believed = input.prevRows ?? rows;
    // Text written without a redraw (a paste) that ends exactly at the right edge leaves the
    // cursor on that row, not at the start of the next.
    const actual = believed !== rows && cols === 0 && rows > 0 ? rows - 1 : rows;
    this.#write(`${actual > 0 ? `\u001b[${actual}A` : ''}\r\u001b[J`);
    return believed;
  }

  #redrawInput(input: ChatInput, rows: number): void {
    if (rows > 0) this.#write('\n'.repeat(rows));
    input.prompt(true);
  }
}
