import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createProcessTag, type ProcessTag } from './tagged-processes.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The entry of a tagged child's scratch TMPDIR that is tsx's (a link to this host's compiled files), not the child's. */
export const TSX_CACHE_LINK = `tsx-${String(process.geteuid?.() ?? userInfo().username)}`;

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A `node --import tsx` child whose every descendant carries a tag, with a scratch TMPDIR. */
export interface TaggedChild {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly tag: ProcessTag;
  /** The child's TMPDIR: a fresh directory, removed by `cleanUp`. */
  readonly scratch: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with how the child exited; it does not wait for the pipes, which a survivor may hold. */
  readonly exited: Promise<ChildExit>;
  /** Resolves with the first stdout line that matches; rejects when the child exits first or after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves once stderr contains `text`; rejects when the child exits first or after `timeoutMs`. */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  /** How the child exited, or `'still running'` after `ms`. */
  exitWithin(ms: number): Promise<ChildExit | 'still running'>;
  /** SIGKILLs the child if it runs and every process carrying the tag (only those), removes the scratch directory. */
  cleanUp(): void;
}

/**
 * Starts `node --import tsx ...args` in the repository root with a new tag (`tagName`), its own
 * scratch TMPDIR, and `env`. Node's directory leads PATH (fixtures are `#!/usr/bin/env node`
 * scripts). tsx keeps its compiled files in `<TMPDIR>/tsx-<user>`: the scratch directory links it
 * to this host's, so that a child does not compile the library again (about half a second of CPU
 * per child).
 */
export function startTaggedNode(args: readonly string[], tagName: string, env: Readonly<Record<string, string>> = {}): TaggedChild {
  const tag = createProcessTag(tagName);
  const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-tagged-'));
  mkdirSync(join(tmpdir(), TSX_CACHE_LINK), { recursive: true });
  symlinkSync(join(tmpdir(), TSX_CACHE_LINK), join(scratch, TSX_CACHE_LINK));
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...tag.env,
      TMPDIR: scratch,
      PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<ChildExit>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const waitFor = async <T>(find: () => T | undefined, what: string, timeoutMs: number): Promise<T> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (!running() || performance.now() > deadline) throw new Error(`no ${what}; stdout:\n${stdout}\nstderr:\n${stderr}`);
      await delay(20);
    }
  };
  return {
    child,
    tag,
    scratch,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForLine: (pattern, timeoutMs = 20_000) =>
      waitFor(() => stdout.split('\n').find((line) => pattern.test(line)), `stdout line matching ${String(pattern)}`, timeoutMs),
    waitForStderr: (text, timeoutMs = 20_000) => waitFor(() => (stderr.includes(text) ? true : undefined), `${JSON.stringify(text)} on stderr`, timeoutMs).then(() => undefined),
    exitWithin: (ms) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          resolve('still running');
        }, ms);
        void exited.then((exit) => {
          clearTimeout(timer);
          resolve(exit);
        });
      }),
    cleanUp: () => {
      if (running()) child.kill('SIGKILL');
      tag.killAll();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
