import { afterEach, describe, expect, it } from '@jest/globals';
import type { Observable } from 'rxjs';
import { runCodex, runGemini, stopAllRuns, type CliMessage, type StopReport } from '../../lib/index.js';
import { sigintDeafScript, stopWhenStarted } from '../helpers/interrupts.js';
import { isAlive } from '../helpers/processes.js';

afterEach(async () => {
  await stopAllRuns();
});

interface Options {
  readonly gracePeriodMs: number;
  readonly interrupt?: { readonly signal: NodeJS.Signals };
  readonly onStopped: (report: StopReport) => void;
}

// The agents whose sources interrupt with SIGTERM, each with a stand-in that ignores SIGINT but not
// SIGTERM and prints the agent's session header (for Gemini CLI, `--` keeps its arguments from Node).
const AGENTS: readonly [string, { readonly sessionId: string; readonly model?: string }, (options: Options) => Observable<CliMessage>][] = [
  [
    'Codex',
    { sessionId: 'T' },
    (options) =>
      runCodex({ prompt: 'x', executable: process.execPath, executableArgs: ['-e', sigintDeafScript({ type: 'thread.started', thread_id: 'T' })], killTimeoutMs: 10_000, ...options }),
  ],
  [
    'Gemini CLI',
    { sessionId: 'S', model: 'm' },
    (options) =>
      runGemini({
        prompt: 'x',
        executable: process.execPath,
        executableArgs: ['-e', sigintDeafScript({ type: 'init', session_id: 'S', model: 'm' }), '--'],
        killTimeoutMs: 10_000,
        ...options,
      }),
  ],
];

describe.each(AGENTS)('%s: the interrupt', (_name, header, run) => {
  it('is SIGTERM on unsubscribe: a process that ignores only SIGINT ends in the grace period; nothing after', async () => {
    const { report, seen } = await stopWhenStarted((onStopped) => run({ gracePeriodMs: 20_000, onStopped }));
    expect(report).toMatchObject({ requested: true, cause: 'unsubscribe', exitedGracefully: true, killed: [], confirmed: true });
    expect(isAlive(report.pid ?? -1)).toBe(false);
    expect(seen).toEqual([{ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), ...header }]);
  });

  it("is the caller's when given: with SIGINT the same process must be killed after the grace period", async () => {
    const { report } = await stopWhenStarted((onStopped) => run({ gracePeriodMs: 300, interrupt: { signal: 'SIGINT' }, onStopped }));
    expect(report).toMatchObject({ requested: true, exitedGracefully: false, confirmed: true });
    expect(report.killed).toContain(report.pid);
    expect(isAlive(report.pid ?? -1)).toBe(false);
  });
});
