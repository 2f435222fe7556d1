import type { Observable } from 'rxjs';
import type { CliMessage, StopReport } from '../../lib/index.js';

/**
 * A Node script that ignores SIGINT but not SIGTERM, prints one line (an agent's session header)
 * and waits: for checking which signal a source interrupts its agent with.
 */
export function sigintDeafScript(headerLine: object): string {
  return `process.on('SIGINT', () => {}); process.stdout.write(${JSON.stringify(`${JSON.stringify(headerLine)}\n`)}); setInterval(() => {}, 1000);`;
}

/** Starts a run, unsubscribes at its `session.started`, and resolves with the stop report and what was emitted. */
export function stopWhenStarted(start: (onStopped: (report: StopReport) => void) => Observable<CliMessage>): Promise<{ report: StopReport; seen: CliMessage[] }> {
  return new Promise((resolve) => {
    const seen: CliMessage[] = [];
    const subscription = start((report) => {
      resolve({ report, seen });
    }).subscribe((message) => {
      seen.push(message);
      if (message.type === 'session.started') subscription.unsubscribe();
    });
  });
}
