import { expect } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Observable } from 'rxjs';
import type { CliMessage, StopReport } from '../../lib/index.js';
import { hostTempPath } from '../../lib/process/host-temp.js';
import type { ProcessTag } from '../helpers/tagged-processes.js';

// What the conformance suites of every agent read from a run's messages, and how they stop a run
// while its tool runs.

/** The version of a pinned agent CLI's package (`@anthropic-ai/claude-code`): what the CLI reports of itself, `agentVersion`. */
export function pinnedVersion(packageName: string): string {
  const path = fileURLToPath(new URL(`../../node_modules/${packageName}/package.json`, import.meta.url));
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

/** The messages' types, in order. */
export const types = (messages: readonly CliMessage[]): string[] => messages.map((message) => message.type);

/** The types in order, with each run of equal types shown once. */
export const shape = (messages: readonly CliMessage[]): string[] => types(messages).filter((type, i, all) => type !== all[i - 1]);

/** The `tool.*` messages. */
export const tools = (messages: readonly CliMessage[]): CliMessage[] => messages.filter((message) => message.type.startsWith('tool.'));

/** The id of the session message that must come first. */
export function sessionIdOf(messages: readonly CliMessage[]): string {
  const first = messages[0];
  if (first?.type !== 'session.started' && first?.type !== 'session.resumed') throw new Error('no session message first');
  return first.sessionId;
}

/** Waits up to `ms` for a condition that follows an event elsewhere (the server seeing a request, or a socket close). */
export async function eventually(condition: () => boolean, ms = 2000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(condition()).toBe(true);
}

/**
 * Starts a run and unsubscribes once its tool's process (`comm`, carrying the suite's tag) is
 * running after the `tool.call`: resolves with the run's stop report and the tool's pid.
 */
export function stopWhileToolRuns(
  start: (onStopped: (report: StopReport) => void) => Observable<CliMessage>,
  tag: ProcessTag,
  comm = 'sleep',
): Promise<{ readonly report: StopReport; readonly toolPid: number }> {
  let toolPid = -1;
  return new Promise((resolve, reject) => {
    const subscription = start((report) => {
      resolve({ report, toolPid });
    }).subscribe((message) => {
      if (message.type !== 'tool.call') return;
      tag.waitFor(comm).then(
        (pid) => {
          toolPid = pid;
          subscription.unsubscribe();
        },
        (error: unknown) => {
          subscription.unsubscribe();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  });
}

/** The configuration overlays (`<prefix>*` folders) in the host's temporary folder, where runs make them. */
export function overlays(prefix: string): string[] {
  const dir = hostTempPath();
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort();
}

/** A port nothing listens on: taken from the OS, then closed. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => {
        resolve(port);
      });
    });
  });
}
