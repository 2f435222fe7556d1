import type { CliMessage, StopReport, TerminalCompleted, TerminalFailed } from '../index.js';
import { palette, type Palette } from './ansi.js';
import { formatDuration, formatUsage, lastLine, oneLine, outputHead, plural, toolLine, truncate } from './format.js';

/** Turns a run's messages, one at a time, into the text a person reads in a terminal. */
export interface Renderer {
  /** The text to write for `message`; `elapsedMs` (since the run started) goes into the final line. */
  render(message: CliMessage, elapsedMs: number): string;
  /** The text to write when a signal (default SIGINT, Ctrl-C: "interrupted") stops the run before it ends. */
  interrupted(elapsedMs: number, signal?: NodeJS.Signals): string;
  /** The text to write once a stopped run's processes are gone. */
  stopped(report: StopReport): string;
}

export interface RenderOptions {
  /** ANSI colours and dim text (off for pipes, files and NO_COLOR). */
  readonly color: boolean;
}

// Assistant text streams inline as paragraphs; everything else is whole lines between them.
// State lives in the returned object, so each run needs its own renderer.
export function createRenderer(options: RenderOptions): Renderer {
  const c = palette(options.color);
  let started = false;
  let inText = false;
  let atLineStart = true;
  let shownSession: string | undefined;
  const progress = new Map<string, string>();
  const streamed = new Map<string, Streamed>();
  const timing = new Timing();
  /** The tool call whose line or output was the last thing written. */
  let lastTool: string | undefined;

  // A paragraph of assistant text starts after a blank line and is written as it comes.
  const text = (delta: string): string => {
    if (delta === '') return '';
    const prefix = !inText && started ? '\n' : '';
    started = true;
    inText = true;
    atLineStart = delta.endsWith('\n');
    return prefix + delta;
  };

  // Whole lines; a paragraph of text before them is closed with a blank line, `gap` asks for one anyway.
  const block = (lines: readonly string[], gap = false): string => {
    let prefix = '';
    if (inText) prefix = atLineStart ? '\n' : '\n\n';
    else if (gap && started) prefix = '\n';
    started = true;
    inText = false;
    atLineStart = true;
    lastTool = undefined;
    return `${prefix}${lines.map((line) => `${line}\n`).join('')}`;
  };

  // A tool's cumulative output as it grows: the lines not shown yet, up to the head's size; an
  // output that does not continue what was shown is a progress hint (its last line) instead.
  const update = (id: string, name: string, output: string): string => {
    const shown = streamed.get(id) ?? { text: '', lines: 0 };
    if (output.startsWith(shown.text)) {
      const end = output.lastIndexOf('\n') + 1;
      const fresh = end > shown.text.length ? output.slice(shown.text.length, end).split('\n').slice(0, -1) : [];
      const room = Math.max(0, OUTPUT_HEAD_LINES - shown.lines);
      const lines = fresh.slice(0, room);
      if (lines.length === 0) return '';
      // The text shown ends after the last line printed; lines past the head are counted at the end.
      const text = shown.text + lines.map((line) => `${line}\n`).join('');
      streamed.set(id, { text, lines: shown.lines + lines.length });
      // Below another tool's lines, say whose these are.
      const header = lastTool === id ? [] : [c.dim(`  ⋯ ${name}`)];
      const written = block([...header, ...lines.map((line) => `    ${c.dim(truncate(line.replace(/\r$/, ''), OUTPUT_WIDTH))}`)]);
      lastTool = id;
      return written;
    }
    const hint = truncate(lastLine(output), 100);
    if (hint === '' || progress.get(id) === hint) return '';
    progress.set(id, hint);
    return block([c.dim(`  ⋯ ${name}  ${hint}`)]);
  };

  // A tool's result: what its updates did not show yet, then the mark; all of it when they showed none.
  const result = (id: string, name: string, output: string, failed: boolean): string => {
    const shown = streamed.get(id);
    streamed.delete(id);
    progress.delete(id);
    if (shown === undefined || !output.startsWith(shown.text)) return block(toolResultLines(name, output, failed, c));
    const rest = outputHead(output.slice(shown.text.length), Math.max(0, OUTPUT_HEAD_LINES - shown.lines), OUTPUT_WIDTH);
    const shade = failed ? c.red : c.dim;
    const more = rest.omitted > 0 ? [c.dim(`    … ${plural(rest.omitted, 'more line')}`)] : [];
    const header = lastTool === id || rest.lines.length + more.length === 0 ? [] : [c.dim(`  ⋯ ${name}`)];
    return block([...header, ...rest.lines.map((line) => `    ${shade(line)}`), ...more, `  ${failed ? c.red('✗') : c.green('✓')} ${name}`]);
  };

  return {
    render(message, elapsedMs) {
      timing.see(message, elapsedMs);
      switch (message.type) {
        case 'session.started':
        case 'session.resumed':
          shownSession = message.sessionId;
          return block([c.dim(`${message.type === 'session.started' ? 'session' : 'resumed session'} ${message.sessionId}`)]);
        case 'assistant':
          return text(message.text);
        case 'assistant.withdrawn':
          // A terminal cannot take back what it printed: say what the agent withdrew; its new text follows.
          return block([c.yellow(`⌫ the agent revised its answer: withdrawn ${JSON.stringify(truncate(message.text, 80))}`)]);
        case 'assistant.thought':
          return message.text.trim() === '' ? '' : block(thoughtLines(message.text, c));
        case 'tool.call': {
          const text = block([`${c.cyan('▸')} ${c.bold(message.name)}  ${c.dim(toolLine(message.summary, message.input))}`]);
          lastTool = message.toolCallId;
          return text;
        }
        case 'tool.update':
          return update(message.toolCallId, message.name, message.output);
        case 'tool.completed':
        case 'tool.failed':
          return result(message.toolCallId, message.name, message.output, message.type === 'tool.failed');
        case 'permission.requested':
          return block([`${c.yellow('?')} ${c.bold(message.tool)} asks to ${message.kind}  ${c.dim(truncate(oneLine(message.title), 100))}`]);
        case 'permission.resolved': {
          const allowed = message.decision.startsWith('allow');
          const mark = allowed ? c.green('✓ allowed') : c.red('✗ denied');
          return block([`  ${mark}${message.decision.endsWith('always') ? ' always' : ''} ${c.dim(`by ${message.by}`)}`]);
        }
        case 'agent.retry': {
          // What the agent does not say is left out.
          const count = message.attempt === undefined ? '' : ` ${message.attempt}${message.maxAttempts === undefined ? '' : `/${message.maxAttempts}`}`;
          const wait = message.delayMs === undefined ? '' : ` in ${formatDuration(message.delayMs)}`;
          return block([c.yellow(`⟳ retry${count}${wait} · ${oneLine(message.reason)}`)]);
        }
        case 'agent.warning':
          return block([c.yellow(`⚠ ${oneLine(message.message)}`)]);
        case 'run.retrying':
          return block([
            c.yellow(`⟳ attempt ${message.attempt} in ${formatDuration(message.delayMs)} · ${oneLine(message.failure.agentError ?? message.failure.message)}`),
          ]);
        case 'terminal.completed':
          return block([completedLine(message, timing.summary(elapsedMs), shownSession, c)], true);
        case 'terminal.failed':
          return block(failedLines(message, timing.summary(elapsedMs), shownSession, c), true);
      }
    },
    interrupted(elapsedMs, signal = 'SIGINT') {
      const how = signal === 'SIGINT' ? 'interrupted' : `${signal} received`;
      return block([c.yellow(`⏹ ${how} after ${formatDuration(elapsedMs)}, stopping the agent`)], true);
    },
    stopped(report) {
      const how = report.exitedGracefully ? 'stopped gracefully' : `killed (${plural(report.killed.length, 'process', 'processes')})`;
      const left = report.confirmed ? '' : `; still running: ${report.survivors.join(', ')}`;
      return block([c.dim(`  agent ${how} in ${formatDuration(report.durationMs)}${left}`)]);
    },
  };
}

/** How many of an answer's schema issues are shown. */
const MAX_ISSUES_SHOWN = 5;

/** How many lines of a tool's output are shown, and how wide. */
const OUTPUT_HEAD_LINES = 4;
const OUTPUT_WIDTH = 120;

/** What of a tool's output its updates showed: a prefix of the output, and how many lines it has. */
interface Streamed {
  readonly text: string;
  readonly lines: number;
}

/**
 * Where a run's time went, from the elapsed time at each message: when the first assistant text
 * came, and how long tools ran (each call from its `tool.call` to its result; calls that overlap
 * count once).
 */
class Timing {
  #firstTextMs: number | undefined;
  readonly #open = new Map<string, number>();
  readonly #spans: (readonly [number, number])[] = [];
  #calls = 0;

  see(message: CliMessage, elapsedMs: number): void {
    if (message.type === 'assistant' && message.text !== '') this.#firstTextMs ??= elapsedMs;
    else if (message.type === 'tool.call' && !this.#open.has(message.toolCallId)) {
      this.#open.set(message.toolCallId, elapsedMs);
      this.#calls += 1;
    } else if (message.type === 'tool.completed' || message.type === 'tool.failed') {
      const start = this.#open.get(message.toolCallId);
      if (start === undefined) return;
      this.#open.delete(message.toolCallId);
      this.#spans.push([start, elapsedMs]);
    }
  }

  /** `4.2s · first token 1.1s · tools 2.3s (3 calls)`: what is known of it; calls still open end now. */
  summary(elapsedMs: number): string {
    const parts = [formatDuration(elapsedMs)];
    if (this.#firstTextMs !== undefined) parts.push(`first token ${formatDuration(this.#firstTextMs)}`);
    if (this.#calls > 0) {
      const spans = [...this.#spans, ...[...this.#open.values()].map((start) => [start, elapsedMs] as const)].sort((a, b) => a[0] - b[0]);
      let total = 0;
      let end = -Infinity;
      for (const [from, to] of spans) {
        // Only the part after what was already counted.
        if (to > end) total += to - Math.max(from, end);
        end = Math.max(end, to);
      }
      parts.push(`tools ${formatDuration(total)} (${plural(this.#calls, 'call')})`);
    }
    return parts.join(' · ');
  }
}

/** The first lines of a run: a heading saying what runs, and the prompt. */
export function renderIntro(heading: string, prompt: string, options: RenderOptions, attached: readonly string[] = []): string {
  const c = palette(options.color);
  const more = attached.map((line) => `${c.dim(`+ ${line}`)}\n`).join('');
  return prompt === '' ? `${c.dim(heading)}\n${more}` : `${c.dim(heading)}\n${c.bold('> ')}${oneLine(prompt)}\n${more}`;
}

// A dim `thinking` header over the thought, each line behind a bar.
function thoughtLines(thought: string, c: Palette): string[] {
  const lines = thought.trim().split(/\r?\n/);
  return [c.dim('thinking'), ...lines.map((line) => c.dim(`│ ${line}`))];
}

// `✓ name  output` for one line of output; a longer output goes below, cut to a few lines.
function toolResultLines(name: string, output: string, failed: boolean, c: Palette): string[] {
  const mark = failed ? c.red('✗') : c.green('✓');
  const shade = failed ? c.red : c.dim;
  const head = outputHead(output, OUTPUT_HEAD_LINES, OUTPUT_WIDTH);
  const [first] = head.lines;
  if (first === undefined) return [`  ${mark} ${name}  ${c.dim('(no output)')}`];
  if (head.lines.length === 1 && head.omitted === 0) return [`  ${mark} ${name}  ${shade(first)}`];
  const more = head.omitted > 0 ? [c.dim(`    … ${plural(head.omitted, 'more line')}`)] : [];
  return [`  ${mark} ${name}`, ...head.lines.map((line) => `    ${shade(line)}`), ...more];
}

function completedLine(message: TerminalCompleted, time: string, shownSession: string | undefined, c: Palette): string {
  // A normal end needs no words; any other stop reason is shown (the agent's own for `other`).
  const parts = [c.green(c.bold('✓ completed'))];
  if (message.stopReason !== 'end_turn') parts.push(message.stopReason === 'other' ? (message.agentStopReason ?? 'other') : message.stopReason);
  if (message.usage !== undefined) parts.push(formatUsage(message.usage));
  parts.push(time);
  if (message.sessionId !== undefined && message.sessionId !== shownSession) parts.push(`session ${message.sessionId}`);
  return parts.join(' · ');
}

// The status line, then what helps to understand the failure: the agent's error, stderr, bad output.
function failedLines(message: TerminalFailed, time: string, shownSession: string | undefined, c: Palette): string[] {
  const parts = [c.red(c.bold('✗ failed')), `${message.reason}: ${truncate(oneLine(message.message), 300)}`];
  if (message.exitCode !== null && message.exitCode !== 0) parts.push(`exit ${message.exitCode}`);
  if (message.signal !== null) parts.push(message.signal);
  parts.push(time);
  if (message.sessionId !== undefined && message.sessionId !== shownSession) parts.push(`session ${message.sessionId}`);
  const details: string[] = [];
  if (message.agentError !== undefined && !message.message.includes(message.agentError)) {
    details.push(c.dim(`  agent error: ${truncate(oneLine(message.agentError), 300)}`));
  }
  const stderr = message.stderr.replace(/\s+$/, '');
  if (stderr !== '' && !message.message.includes(stderr)) {
    details.push(...stderr.split(/\r?\n/).slice(-5).map((line) => c.dim(`  stderr │ ${truncate(line, 200)}`)));
  }
  // An answer that did not satisfy the schema: where, and why (one issue is the message's already).
  const issues = (message.outputIssues?.length ?? 0) > 1 ? (message.outputIssues ?? []) : [];
  for (const issue of issues.slice(0, MAX_ISSUES_SHOWN)) details.push(c.dim(`  issue │ ${issue.path === '' ? '(the answer)' : issue.path}: ${truncate(oneLine(issue.message), 200)}`));
  if (issues.length > MAX_ISSUES_SHOWN) details.push(c.dim(`  … ${plural(issues.length - MAX_ISSUES_SHOWN, 'more issue')}`));
  const [invalid] = message.invalidOutputLines;
  if (invalid !== undefined) {
    const count = message.invalidOutputLines.length + message.invalidOutputLinesOmitted;
    const first = `line ${invalid.lineNumber} (${invalid.reason}) ${truncate(oneLine(invalid.text), 80)}`;
    details.push(c.dim(`  ${plural(count, 'unreadable output line')}, first: ${first}`));
  }
  return [parts.join(' · '), ...details];
}
