import { spawn } from 'node:child_process';
import type { Observable } from 'rxjs';
import split2 from 'split2';
import { runPi, type CliMessage, type RunPiOptions } from '../lib/index.js';

/**
 * The child that serves a recorded stream: `cat` of the file, started through `sh` so that the
 * arguments runPi appends (`--mode json`) are ignored. runPi and the baselines start exactly this.
 */
export function serveCommand(file: string): { command: string; args: string[] } {
  return { command: 'sh', args: ['-c', 'exec cat -- "$0"', file] };
}

/** What runPi appends to the executable's arguments; the baselines pass it too. */
export const PI_ARGS = ['--mode', 'json'] as const;

export interface ReadResult {
  /** The assistant answer as read. */
  readonly text: string;
  /** Milliseconds from spawn (or subscribe) to the end of the stream. */
  readonly ms: number;
  /** Milliseconds from spawn (or subscribe) to the first parsed event or delivered message. */
  readonly firstMs: number;
  /** `process.hrtime.bigint()` at the first parsed event or delivered message. */
  readonly firstAt: bigint;
  /** CPU time (user + system) this process spent from spawn to the end of the stream, ms. */
  readonly cpuMs: number;
}

/** CPU time of this process since `since`, in ms. */
export function cpuSince(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

/**
 * The hand-written baseline a user would write: child_process + split2 + JSON.parse of every line
 * + concatenation of the text deltas. It gets the prompt on stdin, as runPi's child does.
 */
export function baselineRead(command: string, args: readonly string[]): Promise<ReadResult> {
  return new Promise((resolve, reject) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    let firstMs = -1;
    let firstAt = 0n;
    let text = '';
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.on('error', () => undefined);
    child.stdin.end('prompt');
    child.stderr.resume();
    child.on('error', reject);
    child.stdout.pipe(split2()).on('data', (line: string) => {
      if (line === '') return;
      let event: { type?: unknown; assistantMessageEvent?: { type?: unknown; delta?: unknown } };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        return;
      }
      if (firstMs < 0) {
        firstAt = process.hrtime.bigint();
        firstMs = performance.now() - started;
      }
      const update = event.assistantMessageEvent;
      if (event.type === 'message_update' && update?.type === 'text_delta' && typeof update.delta === 'string') text += update.delta;
    });
    child.on('close', () => {
      resolve({ text, ms: performance.now() - started, firstMs, firstAt, cpuMs: cpuSince(cpu) });
    });
  });
}

/** The pipe alone: the same child, its stdout read and dropped. The practical upper limit. */
export function pipeRead(command: string, args: readonly string[]): Promise<{ bytes: number; ms: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    let bytes = 0;
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdin.on('error', () => undefined);
    child.stdin.end('prompt');
    child.on('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    child.on('close', () => {
      resolve({ bytes, ms: performance.now() - started, cpuMs: cpuSince(cpu) });
    });
  });
}

export type PiSource = (options: RunPiOptions) => Observable<CliMessage>;

/**
 * runPi as it was before its lines stayed bytes: every line decoded to a string, then parsed with
 * the string pre-parser (`parsePiLine`). Kept to measure the byte path in the same run.
 */
export const runPiTextLines: PiSource = (options) => runPi({ ...options, lineEncoding: 'utf8' });

export interface PiReadResult extends ReadResult {
  readonly terminal: CliMessage | undefined;
}

/**
 * runPi reading the same child. Resolves when the stream has completed and the run's clean-up
 * after exit has finished too (so that runs never overlap); `ms` stops at completion.
 */
export function runPiRead(command: string, args: readonly string[], options: Partial<RunPiOptions> = {}, source: PiSource = runPi): Promise<PiReadResult> {
  return new Promise((resolve, reject) => {
    let stopped = false;
    let result: PiReadResult | null = null;
    const settle = (): void => {
      if (stopped && result !== null) resolve(result);
    };
    const cpu = process.cpuUsage();
    const started = performance.now();
    let firstMs = -1;
    let firstAt = 0n;
    const pieces: string[] = [];
    let terminal: CliMessage | undefined;
    source({
      prompt: 'prompt',
      executable: command,
      executableArgs: args,
      ...options,
      onStopped: () => {
        stopped = true;
        settle();
      },
    }).subscribe({
      next: (message) => {
        if (firstMs < 0) {
          firstAt = process.hrtime.bigint();
          firstMs = performance.now() - started;
        }
        if (message.type === 'assistant') pieces.push(message.text);
        else if (message.type === 'terminal.completed' || message.type === 'terminal.failed') terminal = message;
      },
      error: reject,
      complete: () => {
        result = { text: pieces.join(''), ms: performance.now() - started, firstMs, firstAt, cpuMs: cpuSince(cpu), terminal };
        settle();
      },
    });
  });
}
