import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Subject } from 'rxjs';
import { runPi, type SessionCommand, type SessionMessage, type StopReport } from '../../lib/index.js';
import { fixtureSession } from '../helpers/fixture-session.js';
import { createProcessTag } from '../helpers/tagged-processes.js';

// Where the agent is, in the stream's first message: its pid and its process group, as the
// system's tools see them.

const REPLAY_AGENT = fileURLToPath(new URL('../../examples/replay-agent/pi-replay.mjs', import.meta.url));
const TAG = createProcessTag('AGENT_RX_PROCESS_FACTS');

/** A live process's process group, from /proc/<pid>/stat (the field after the state and the parent). */
function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[2]);
}

describe('the session message of a run or a session says where its agent is', () => {
  it("gives a run's pid and process group in session.started, while the agent runs: the pid the stop report names", async () => {
    let group = -1;
    let reported!: (report: StopReport) => void;
    const report = new Promise<StopReport>((resolve) => (reported = resolve));
    const messages = await new Promise<SessionMessage[]>((resolve, reject) => {
      const seen: SessionMessage[] = [];
      runPi({ prompt: 'hi', model: 'text', executable: process.execPath, executableArgs: [REPLAY_AGENT], env: { PI_REPLAY_SPEED: '0.2', ...TAG.env }, onStopped: (stopped) => { reported(stopped); } }).subscribe({
        next: (message) => {
          seen.push(message);
          if (message.type === 'session.started' && message.pid !== undefined) group = processGroupOf(message.pid);
        },
        error: reject,
        complete: () => { resolve(seen); },
      });
    });
    const started = messages[0];
    expect(started).toMatchObject({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number) });
    if (started?.type !== 'session.started') throw new Error('no session.started first');
    expect(group).toBe(started.processGroup);
    expect(started.processGroup).toBe(started.pid);
    expect((await report).pid).toBe(started.pid);
  });

  it("gives a session's pid in its session.started: the agent process that printed it", async () => {
    const commands = new Subject<SessionCommand>();
    const started = await new Promise<SessionMessage>((resolve) => {
      commands.pipe(fixtureSession(() => undefined, { tag: TAG })).subscribe((message) => {
        if (message.type === 'session.started') {
          resolve(message);
          commands.complete();
        }
      });
    });
    // The fixture agent names its session after its own pid.
    expect(started).toMatchObject({ type: 'session.started', pid: Number((started as { sessionId: string }).sessionId.replace('fixture-', '')) });
    expect(started).toMatchObject({ processGroup: (started as { pid: number }).pid });
  });
});

describe('the terminal comes after the clean-up', () => {
  const ENDS_LEAVING_A_TOOL = fileURLToPath(new URL('../fixtures/pi/text.jsonl', import.meta.url));

  it('when a run whose agent exits by itself leaves a tool running in its own session: the tool is gone by the terminal, and onStopped came first', async () => {
    // The agent starts a "tool" in a session of its own (out of the agent's process group), prints a recorded run and exits 0.
    const script = `
      const { spawn } = require('node:child_process');
      spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' }).unref();
      process.stdout.write(require('node:fs').readFileSync(${JSON.stringify(ENDS_LEAVING_A_TOOL)}), () => process.exit(0));
    `;
    const heard: string[] = [];
    let leftAtTerminal: number | undefined;
    await new Promise<void>((resolve, reject) => {
      runPi({ prompt: 'hi', executable: process.execPath, executableArgs: ['-e', script, '--'], env: TAG.env, onStopped: (report) => heard.push(`stopped killed=${String(report.killed.length)}`) }).subscribe({
        next: (message) => {
          if (message.type !== 'terminal.completed' && message.type !== 'terminal.failed') return;
          heard.push(message.type);
          leftAtTerminal = TAG.processes().length;
        },
        error: reject,
        complete: resolve,
      });
    });
    expect(heard).toEqual(['stopped killed=1', 'terminal.completed']);
    expect(leftAtTerminal).toBe(0);
  });
});

