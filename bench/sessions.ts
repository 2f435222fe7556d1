import { Subject, type Observable, type OperatorFunction } from 'rxjs';
import {
  claudeCodeSession,
  codexSession,
  geminiSession,
  piSession,
  runClaudeCode,
  runCodex,
  runGemini,
  runPi,
  type CliMessage,
  type SessionCommand,
  type SessionMessage,
  type StopReport,
} from '../lib/index.js';
import { claudeExecutable, createClaudeEnv } from '../spec/conformance/claude-env.js';
import { createCodexEnv } from '../spec/conformance/codex-env.js';
import { createGeminiEnv, geminiCommand } from '../spec/conformance/gemini-env.js';
import { scenarioMarker, startFakeModelServer } from '../spec/conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER } from '../spec/conformance/pi-env.js';
import { createProcessTag, type ProcessTag } from '../spec/helpers/tagged-processes.js';
import { AcpBridge } from '../spec/conformance/acp-bridge.js';
import { benchFile, check, isAlive, ratios, summarize, type Summary } from './util.js';

/**
 * Sessions against the real pi, Claude Code, Codex and Gemini CLIs and the fake model server on
 * 127.0.0.1. For each agent, `repetitions` times in one session: abort mid-stream (the command →
 * `turn.failed`) and the next prompt's first text; abort during `sleep 30` (the command →
 * `turn.failed`, the sleep checked gone then). The baseline in the same run is what a caller
 * without sessions does: unsubscribe a one-shot run mid-stream (→ its process tree gone), then
 * start a new run for the next prompt (→ its first text).
 */
export interface SessionRow {
  readonly agent: string;
  /** Abort mid-stream → turn.failed, ms. */
  readonly abortStream: Summary;
  /** Abort during `sleep 30` → turn.failed, ms. */
  readonly abortTool: Summary;
  readonly abortToolSamples: readonly number[];
  /** `sleep` processes alive at turn.failed, over the repetitions. */
  readonly toolSurvivors: number;
  /** After an abort: the next prompt → its first text in the same process, ms. */
  readonly nextAnswer: Summary;
  /** Baseline: unsubscribe a one-shot run mid-stream → its tree gone, ms. */
  readonly stopRun: Summary;
  /** Baseline: a new one-shot run → its first text, ms. */
  readonly newRun: Summary;
  /** (abort + next first text) / (stop + new run's first text), per repetition. */
  readonly ratio: Summary;
  /** Through `agent-rx acp` (pi only): session/cancel during `sleep 30` → the prompt's answer, ms. */
  readonly acpCancel?: Summary;
  /** That, over the abort during `sleep 30` without the bridge, per repetition. */
  readonly acpRatio?: Summary;
}

interface Agent {
  readonly name: string;
  session(tag: ProcessTag): OperatorFunction<SessionCommand, SessionMessage>;
  run(prompt: string, tag: ProcessTag, onStopped: (report: StopReport) => void): Observable<CliMessage>;
  cleanup(): Promise<void>;
}

/** A session driven one command at a time: `until` awaits the next message that matches. */
class Driver {
  readonly #commands = new Subject<SessionCommand>();
  #waiters: { match: (message: SessionMessage) => boolean; resolve: (at: number) => void }[] = [];
  readonly #subscription;

  constructor(session: OperatorFunction<SessionCommand, SessionMessage>) {
    this.#subscription = this.#commands.pipe(session).subscribe((message) => {
      const at = performance.now();
      this.#waiters = this.#waiters.filter((waiter) => {
        if (!waiter.match(message)) return true;
        waiter.resolve(at);
        return false;
      });
    });
  }

  /** Sends `command` and resolves with the time the first matching message after it arrived. */
  send(command: SessionCommand, match: (message: SessionMessage) => boolean): Promise<number> {
    const arrived = new Promise<number>((resolve) => this.#waiters.push({ match, resolve }));
    this.#commands.next(command);
    return arrived;
  }

  /** Resolves with the time of the next message that matches, without sending anything. */
  next(match: (message: SessionMessage) => boolean): Promise<number> {
    return new Promise<number>((resolve) => this.#waiters.push({ match, resolve }));
  }

  close(): void {
    this.#subscription.unsubscribe();
  }
}

const slow = `${scenarioMarker('slow_text')}write slowly`;
const is = (type: string) => (message: { readonly type: string }): boolean => message.type === type;

export async function sessionLatencies(repetitions: number): Promise<SessionRow[]> {
  const server = await startFakeModelServer();
  const pi = await createPiEnv({ baseUrl: server.baseUrl });
  const claude = createClaudeEnv({ baseUrl: server.baseUrl });
  const claudeExe = claudeExecutable();
  const codex = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
  const piOptions = (tag: ProcessTag) => ({ executable: benchFile('../node_modules/.bin/pi'), provider: OPENAI_PROVIDER, model: 'recall', session: 'none' as const, cwd: pi.cwd, env: { ...pi.env, ...tag.env } });
  const claudeOptions = (tag: ProcessTag) => ({ executable: claudeExe.command, executableArgs: claudeExe.args, model: 'recall', allowedTools: ['Bash'], cwd: claude.cwd, env: { ...claude.env, ...tag.env } });
  const codexOptions = (tag: ProcessTag) => ({ cwd: codex.cwd, env: { ...codex.env, ...tag.env }, extraArgs: ['-c', codex.baseUrlOverride('recall')] });
  const gemini = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'recall', maxAttempts: 1 });
  const geminiExe = geminiCommand();
  const geminiOptions = (tag: ProcessTag) => ({ executable: geminiExe.command, executableArgs: geminiExe.args, approvalMode: 'yolo' as const, cwd: gemini.cwd, env: { ...gemini.env, ...tag.env } });
  const agents: Agent[] = [
    {
      name: 'pi',
      session: (tag) => piSession(piOptions(tag)),
      run: (prompt, tag, onStopped) => runPi({ ...piOptions(tag), prompt, onStopped }),
      cleanup: () => pi.cleanup(),
    },
    {
      name: 'Claude Code',
      session: (tag) => claudeCodeSession(claudeOptions(tag)),
      run: (prompt, tag, onStopped) => runClaudeCode({ ...claudeOptions(tag), prompt, onStopped }),
      cleanup: () => claude.cleanup(),
    },
    {
      name: 'Codex',
      session: (tag) => codexSession(codexOptions(tag)),
      run: (prompt, tag, onStopped) => runCodex({ ...codexOptions(tag), prompt, transport: 'app-server', onStopped }),
      cleanup: () => codex.cleanup(),
    },
    {
      name: 'Gemini CLI (ACP)',
      session: (tag) => geminiSession(geminiOptions(tag)),
      run: (prompt, tag, onStopped) => runGemini({ ...geminiOptions(tag), prompt, onStopped }),
      cleanup: () => gemini.cleanup(),
    },
  ];
  const rows: SessionRow[] = [];
  try {
    for (const agent of agents) rows.push(await measure(agent, repetitions));
    const bridged = await acpCancels(['--agent', 'pi', '--executable', benchFile('../node_modules/.bin/pi'), '--provider', OPENAI_PROVIDER, '--model', 'recall'], pi.env, pi.cwd, repetitions);
    const direct = rows[0];
    if (direct !== undefined) rows[0] = { ...direct, acpCancel: summarize(bridged), acpRatio: ratios(bridged, direct.abortToolSamples) };
  } finally {
    await server.close();
    for (const agent of agents) await agent.cleanup();
  }
  return rows;
}

async function measure(agent: Agent, repetitions: number): Promise<SessionRow> {
  const tag = createProcessTag('AGENT_RX_BENCH_SESSION');
  const abortStream: number[] = [];
  const abortTool: number[] = [];
  const nextAnswer: number[] = [];
  let toolSurvivors = 0;
  const log = (what: string): void => {
    if (process.env["BENCH_DEBUG"] === "1") console.error(`${agent.name}: ${what}`);
  };
  const driver = new Driver(agent.session(tag));
  try {
    for (let i = 0; i < repetitions; i += 1) {
      log(`repetition ${String(i)}`);
      await driver.send({ type: 'prompt', text: slow }, is('assistant'));
      log('streaming');
      let sent = performance.now();
      abortStream.push((await driver.send({ type: 'abort' }, is('turn.failed'))) - sent);
      sent = performance.now();
      const ended = driver.next((message) => message.type === 'turn.completed' || message.type === 'turn.failed');
      nextAnswer.push((await driver.send({ type: 'prompt', text: `after abort ${String(i)}` }, is('assistant'))) - sent);
      await ended;
      log('next answered');
      await driver.send({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}sleep` }, is('tool.call'));
      const sleep = await tag.waitFor('sleep');
      log('sleeping');
      sent = performance.now();
      abortTool.push((await driver.send({ type: 'abort' }, is('turn.failed'))) - sent);
      if (isAlive(sleep)) toolSurvivors += 1;
    }
  } finally {
    driver.close();
  }
  const stopRun: number[] = [];
  const newRun: number[] = [];
  for (let i = 0; i < repetitions; i += 1) {
    // A one-shot run stopped mid-stream, then a new run for the next prompt.
    const stopped = await new Promise<number>((resolve) => {
      let unsubscribedAt = 0;
      const subscription = agent
        .run(slow, tag, () => {
          resolve(performance.now() - unsubscribedAt);
        })
        .subscribe((message) => {
          if (message.type !== 'assistant' || unsubscribedAt !== 0) return;
          unsubscribedAt = performance.now();
          setImmediate(() => {
            subscription.unsubscribe();
          });
        });
    });
    stopRun.push(stopped);
    const started = performance.now();
    newRun.push(
      await new Promise<number>((resolve) => {
        const subscription = agent
          .run(`again ${String(i)}`, tag, () => undefined)
          .subscribe((message) => {
            if (message.type !== 'assistant') return;
            resolve(performance.now() - started);
            setImmediate(() => {
              subscription.unsubscribe();
            });
          });
      }),
    );
  }
  const left = await tag.waitUntilNone(10_000);
  check(left.length === 0, `${agent.name}: processes left after the benchmark: ${left.map((entry) => `${String(entry.pid)} ${entry.comm}`).join(', ')}`);
  const sessionWay = abortStream.map((ms, i) => ms + (nextAnswer[i] ?? 0));
  const runWay = stopRun.map((ms, i) => ms + (newRun[i] ?? 0));
  return {
    agent: agent.name,
    abortStream: summarize(abortStream),
    abortTool: summarize(abortTool),
    abortToolSamples: abortTool,
    toolSurvivors,
    nextAnswer: summarize(nextAnswer),
    stopRun: summarize(stopRun),
    newRun: summarize(newRun),
    ratio: ratios(sessionWay, runWay),
  };
}

/** `repetitions` cancels during `sleep 30` through `agent-rx acp` as shipped (dist/), in one ACP session: session/cancel → the answer. */
async function acpCancels(args: readonly string[], env: Readonly<Record<string, string | undefined>>, cwd: string, repetitions: number): Promise<number[]> {
  const tag = createProcessTag('AGENT_RX_BENCH_ACP');
  const bridge = new AcpBridge(args, { ...env, ...tag.env }, [benchFile('../dist/cli/main.js')]);
  const samples: number[] = [];
  try {
    const sessionId = await bridge.open(cwd);
    for (let i = 0; i < repetitions; i += 1) {
      const answer = bridge.prompt(sessionId, `${scenarioMarker('sleep_tool')}sleep ${String(i)}`);
      await tag.waitFor('sleep');
      const sent = performance.now();
      await bridge.agent.notify('session/cancel', { sessionId });
      const { stopReason } = await answer;
      samples.push(performance.now() - sent);
      check(stopReason === 'cancelled', `the bridge answered ${stopReason}, not cancelled`);
    }
  } finally {
    bridge.disconnect();
    await bridge.exited;
  }
  const left = await tag.waitUntilNone(10_000);
  check(left.length === 0, `processes left after the bridge: ${left.map((entry) => `${String(entry.pid)} ${entry.comm}`).join(', ')}`);
  return samples;
}
