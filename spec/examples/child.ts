import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const REPLAY_SCRIPT = fileURLToPath(new URL('../../examples/replay-agent/pi-replay.mjs', import.meta.url));
export const DEMO_SCRIPT = fileURLToPath(new URL('../../examples/demo.ts', import.meta.url));
export const TRANSCRIPTS = fileURLToPath(new URL('../../examples/replay-agent/transcripts/', import.meta.url));

/** A started child with its output gathered as it comes. */
export interface Child {
  readonly process: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Settles when the child has exited and its pipes are closed. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stdout contains `text`. */
  readonly waitForStdout: (text: string) => Promise<void>;
}

// Starts `node ...args` with a piped stdin left open, and extra environment variables.
export function startNode(args: readonly string[], env: Readonly<Record<string, string>> = {}): Child {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = once(child, 'close').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const waitForStdout = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!stdout.includes(text)) return;
        child.stdout.off('data', check);
        resolve();
      };
      child.stdout.on('data', check);
      void closed.then(() => {
        if (stdout.includes(text)) resolve();
        else reject(new Error(`exited before printing ${JSON.stringify(text)}; stdout: ${stdout}; stderr: ${stderr}`));
      });
      check();
    });
  return { process: child, stdout: () => stdout, stderr: () => stderr, closed, waitForStdout };
}

// Runs `node ...args` to the end with `stdin` written and closed.
export async function runNode(args: readonly string[], stdin: string, env: Readonly<Record<string, string>> = {}) {
  const child = startNode(args, env);
  child.process.stdin?.end(stdin);
  const { code, signal } = await child.closed;
  return { code, signal, stdout: child.stdout(), stderr: child.stderr() };
}
