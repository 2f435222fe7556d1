import { TestScheduler } from 'rxjs/testing';
import { expect } from '@jest/globals';
import type { EventItem, ProcessExit, ProcessLine, RunExit, TerminalFailed, TextItem, WithdrawItem } from '../../lib/index.js';

export function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });
}

export const line = (text: string): ProcessLine => ({ kind: 'line', text });

export const exit = (extra: Partial<ProcessExit> = {}): ProcessExit => ({
  kind: 'exit',
  exitCode: 0,
  signal: null,
  stderr: '',
  stderrTruncatedBytes: 0,
  startError: null,
  pid: 42,
  durationMs: 1,
  ...extra,
});

export const runExit = (extra: Partial<RunExit> = {}): RunExit => ({ ...exit(), invalidOutput: { lines: [], omitted: 0 }, ...extra });

export const ev = (type: string, fields: Record<string, unknown> = {}, lineNumber = 1): EventItem => ({
  kind: 'event',
  event: { type, ...fields },
  lineNumber,
});

export const text = (value: string, channel: TextItem['channel'] = 'assistant'): TextItem => ({ kind: 'text', channel, text: value });

export const withdraw = (value: string, channel: WithdrawItem['channel'] = 'assistant'): WithdrawItem => ({ kind: 'withdraw', channel, text: value });

/**
 * The source marble for an expected marble in which each event is preceded, in the same frame,
 * by the items derived from it: `-(1a)-(2b)|` → `-a----b---|`. Digits are derived items.
 */
export function sourceMarble(expected: string): string {
  return expected.replace(/\(([^)]*)\)/g, (group, inner: string) => {
    const events = inner.replace(/[0-9]/g, '');
    return `${events}${'-'.repeat(group.length - events.length)}`;
  }).replace(/[0-9]/g, '-');
}

/** A `terminal.failed` with neutral defaults (a pi agent error, exit 0, no diagnostics). */
export const terminalFailed = (fields: Partial<TerminalFailed> = {}): TerminalFailed => ({
  type: 'terminal.failed',
  reason: 'agent-error',
  message: 'pi reported an error',
  exitCode: 0,
  signal: null,
  stderr: '',
  stderrTruncatedBytes: 0,
  invalidOutputLines: [],
  invalidOutputLinesOmitted: 0,
  ...fields,
});
