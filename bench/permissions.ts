import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Subject, type OperatorFunction } from 'rxjs';
import {
  claudeCodeSession,
  codexSession,
  geminiSession,
  piSession,
  qwenSession,
  type PermissionDecision,
  type PermissionOptions,
  type SessionCommand,
  type SessionMessage,
} from '../lib/index.js';
import { claudeExecutable, createClaudeEnv } from '../spec/conformance/claude-env.js';
import { createCodexEnv } from '../spec/conformance/codex-env.js';
import { createGeminiEnv, geminiCommand } from '../spec/conformance/gemini-env.js';
import { scenarioMarker, startFakeModelServer } from '../spec/conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER } from '../spec/conformance/pi-env.js';
import { createQwenEnv, qwenCommand } from '../spec/conformance/qwen-env.js';
import { createProcessTag, type ProcessTag } from '../spec/helpers/tagged-processes.js';
import { benchFile, check, ratios, summarize, type Summary } from './util.js';

/**
 * Permission requests against the real CLIs and the fake model server on 127.0.0.1: the model
 * calls the shell tool with `touch`, the agent asks. For each agent, `repetitions` times in one
 * session with `permission: 'ask'`: a `permission` command that denies, then one that allows, each
 * timed from the command to the agent's next message (it resumed: the refusal or the tool's
 * result). The baseline in the same run: a session whose preset denies, timed from its
 * `permission.resolved` to the agent's next message (the agent's own resume, with no command).
 */
export interface PermissionRow {
  readonly agent: string;
  /** A deny command → the agent's next message, ms. */
  readonly deny: Summary;
  /** An allow command → the agent's next message (the tool ran), ms. */
  readonly allow: Summary;
  /** Baseline: a preset's deny (`permission.resolved`) → the agent's next message, ms. */
  readonly preset: Summary;
  /** Deny by command over the preset's deny, per repetition. */
  readonly ratio: Summary;
}

interface Agent {
  readonly name: string;
  readonly cwd: string;
  /**
   * A session per sample: Qwen Code refuses a tool call whose id it has seen in the session, and
   * the fake model server gives a scenario's call the same id each time.
   */
  readonly fresh?: boolean;
  session(tag: ProcessTag, permission: PermissionOptions): OperatorFunction<SessionCommand, SessionMessage>;
  cleanup(): Promise<void>;
}

const touch = `${scenarioMarker('touch_tool')}touch a file`;
const resumed = (message: SessionMessage): boolean => !message.type.startsWith('permission.') && !message.type.startsWith('input.');
const turnEnd = (message: SessionMessage): boolean => message.type === 'turn.completed' || message.type === 'turn.failed';

/** A session read one message at a time, in order. */
class Reader {
  readonly #commands = new Subject<SessionCommand>();
  readonly #messages: { readonly message: SessionMessage; readonly at: number }[] = [];
  #wake: (() => void) | null = null;
  #cursor = 0;
  readonly #subscription;

  constructor(session: OperatorFunction<SessionCommand, SessionMessage>) {
    this.#subscription = this.#commands.pipe(session).subscribe((message) => {
      this.#messages.push({ message, at: performance.now() });
      this.#wake?.();
    });
  }

  send(command: SessionCommand): void {
    this.#commands.next(command);
  }

  /** The next message that matches, and when it came. */
  async next(match: (message: SessionMessage) => boolean, what: string): Promise<{ readonly message: SessionMessage; readonly at: number }> {
    const deadline = performance.now() + 120_000;
    for (;;) {
      const found = this.#messages.slice(this.#cursor).findIndex((entry) => match(entry.message));
      if (found !== -1) {
        this.#cursor += found + 1;
        return this.#messages[this.#cursor - 1] as { readonly message: SessionMessage; readonly at: number };
      }
      this.#cursor = this.#messages.length;
      check(performance.now() < deadline, `no ${what} within 120 s; got ${this.#messages.map((entry) => entry.message.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 1000);
      });
    }
  }

  close(): void {
    this.#subscription.unsubscribe();
  }
}

export async function permissionLatencies(repetitions: number): Promise<PermissionRow[]> {
  const server = await startFakeModelServer();
  const pi = await createPiEnv({ baseUrl: server.baseUrl });
  const claude = createClaudeEnv({ baseUrl: server.baseUrl });
  const claudeExe = claudeExecutable();
  const codex = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
  const gemini = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'recall', maxAttempts: 1 });
  const geminiExe = geminiCommand();
  const qwen = createQwenEnv({ baseUrl: server.openaiBaseUrl });
  const qwenExe = qwenCommand();
  const agents: Agent[] = [
    {
      name: 'pi',
      cwd: pi.cwd,
      session: (tag, permission) =>
        piSession({ executable: benchFile('../node_modules/.bin/pi'), provider: OPENAI_PROVIDER, model: 'recall', session: 'none', cwd: pi.cwd, env: { ...pi.env, ...tag.env }, ...permission }),
      cleanup: () => pi.cleanup(),
    },
    {
      name: 'Claude Code',
      cwd: claude.cwd,
      session: (tag, permission) =>
        claudeCodeSession({ executable: claudeExe.command, executableArgs: claudeExe.args, model: 'recall', allowedTools: [], cwd: claude.cwd, env: { ...claude.env, ...tag.env }, ...permission }),
      cleanup: () => claude.cleanup(),
    },
    {
      name: 'Codex',
      cwd: codex.cwd,
      session: (tag, permission) => codexSession({ cwd: codex.cwd, env: { ...codex.env, ...tag.env }, extraArgs: ['-c', codex.baseUrlOverride('recall')], ...permission }),
      cleanup: () => codex.cleanup(),
    },
    {
      name: 'Gemini CLI',
      cwd: gemini.cwd,
      session: (tag, permission) =>
        geminiSession({ executable: geminiExe.command, executableArgs: geminiExe.args, approvalMode: 'default', cwd: gemini.cwd, env: { ...gemini.env, ...tag.env }, ...permission }),
      cleanup: () => gemini.cleanup(),
    },
    {
      name: 'Qwen Code',
      cwd: qwen.cwd,
      fresh: true,
      session: (tag, permission) =>
        qwenSession({ executable: qwenExe.command, executableArgs: qwenExe.args, model: 'recall', approvalMode: 'default', cwd: qwen.cwd, env: { ...qwen.env, ...tag.env }, ...permission }),
      cleanup: () => qwen.cleanup(),
    },
  ];
  const rows: PermissionRow[] = [];
  try {
    for (const agent of agents) {
      // An agent whose sessions cannot ask yet is left out, not faked.
      try {
        agent.session(createProcessTag('AGENT_RX_BENCH_CHECK'), { permission: 'ask' });
      } catch {
        continue;
      }
      rows.push(await measure(agent, repetitions));
    }
  } finally {
    await server.close();
    for (const agent of agents) await agent.cleanup();
  }
  return rows;
}

async function measure(agent: Agent, repetitions: number): Promise<PermissionRow> {
  const tag = createProcessTag('AGENT_RX_BENCH_PERMISSION');
  const samples: Record<PermissionDecision | 'preset', number[]> = { allow: [], 'allow-always': [], deny: [], 'deny-always': [], preset: [] };
  let asking = new Reader(agent.session(tag, { permission: 'ask' }));
  let presetting = new Reader(agent.session(tag, { permission: 'deny-all' }));
  const renew = (): void => {
    if (agent.fresh !== true) return;
    asking.close();
    presetting.close();
    asking = new Reader(agent.session(tag, { permission: 'ask' }));
    presetting = new Reader(agent.session(tag, { permission: 'deny-all' }));
  };
  try {
    for (let i = 0; i < repetitions; i += 1) {
      if (i > 0) renew();
      for (const decision of ['deny', 'allow'] as const) {
        if (decision === 'allow' && agent.fresh === true) {
          asking.close();
          asking = new Reader(agent.session(tag, { permission: 'ask' }));
        }
        rmSync(join(agent.cwd, 'touched-by-agent.txt'), { force: true });
        asking.send({ type: 'prompt', text: touch });
        const { message } = await asking.next((candidate) => candidate.type === 'permission.requested', `${agent.name}: a request`);
        const requestId = message.type === 'permission.requested' ? message.requestId : '';
        const sent = performance.now();
        asking.send({ type: 'permission', requestId, decision });
        samples[decision].push((await asking.next(resumed, `${agent.name}: the resume after ${decision}`)).at - sent);
        await asking.next(turnEnd, `${agent.name}: the turn's end`);
      }
      presetting.send({ type: 'prompt', text: touch });
      const resolved = await presetting.next((candidate) => candidate.type === 'permission.resolved', `${agent.name}: the preset's resolution`);
      samples.preset.push((await presetting.next(resumed, `${agent.name}: the resume after the preset`)).at - resolved.at);
      await presetting.next(turnEnd, `${agent.name}: the preset turn's end`);
    }
  } finally {
    asking.close();
    presetting.close();
    rmSync(join(agent.cwd, 'touched-by-agent.txt'), { force: true });
  }
  // Qwen Code may take its session's grace period (10 s) to go once unsubscribed.
  const left = await tag.waitUntilNone(30_000);
  check(left.length === 0, `${agent.name}: processes left after the benchmark: ${left.map((entry) => `${String(entry.pid)} ${entry.comm}`).join(', ')}`);
  return { agent: agent.name, deny: summarize(samples.deny), allow: summarize(samples.allow), preset: summarize(samples.preset), ratio: ratios(samples.deny, samples.preset) };
}
