import { Subject, type OperatorFunction } from 'rxjs';
import * as z from 'zod';
import {
  claudeCodeSession,
  codexSession,
  geminiSession,
  piSession,
  qwenSession,
  tool,
  type HostTool,
  type SessionCommand,
  type SessionMessage,
} from '../lib/index.js';
import { claudeExecutable, createClaudeEnv } from '../spec/conformance/claude-env.js';
import { createCodexEnv } from '../spec/conformance/codex-env.js';
import { createGeminiEnv, geminiCommand } from '../spec/conformance/gemini-env.js';
import { callToolText, scenarioMarker, startFakeModelServer } from '../spec/conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER } from '../spec/conformance/pi-env.js';
import { createQwenEnv, qwenCommand } from '../spec/conformance/qwen-env.js';
import { createProcessTag, type ProcessTag } from '../spec/helpers/tagged-processes.js';
import { benchFile, check, ratios, summarize, type Summary } from './util.js';

/**
 * A host tool's call against the same answer from the agent's own shell tool, on the real CLIs
 * and the fake model server on 127.0.0.1. For each agent, `repetitions` times, each in a fresh
 * session with `permission: 'allow-all'` (so both calls take the same permission path): after a
 * first turn without tools (the agent started, its MCP servers connected), the model calls the host
 * tool `say_hello` (answers `hello`) in one turn and the shell tool with `echo hello` in another,
 * in turns (host first in even repetitions, shell first in odd ones). Timed from the prompt to the
 * turn's end, and from the agent's `tool.call` to its `tool.completed` (ACP agents say both at once
 * for an MCP call: 0 there says nothing).
 */
export interface HostToolRow {
  readonly agent: string;
  /** `tool.call` → `tool.completed` of the host tool, ms. */
  readonly hostCall: Summary;
  /** Baseline: the same for `echo hello` by the agent's shell tool, ms. */
  readonly shellCall: Summary;
  /** The host tool's call over the shell's, per repetition. */
  readonly ratio: Summary;
  /** The turn with the host tool over the turn with the shell tool, per repetition. */
  readonly turnRatio: Summary;
  /** Prompt → turn end with the host tool, ms. */
  readonly hostTurn: Summary;
  /** Prompt → turn end with the shell tool, ms. */
  readonly shellTurn: Summary;
}

interface Agent {
  readonly name: string;
  session(tag: ProcessTag, tools: readonly HostTool[]): OperatorFunction<SessionCommand, SessionMessage>;
  cleanup(): Promise<void>;
}

const sayHello = tool({ name: 'say_hello', description: 'Says hello', input: z.object({}), run: () => 'hello' });
const hostPrompt = `${scenarioMarker('call_tool')}${callToolText('say_hello', {})}`;
const shellPrompt = `${scenarioMarker('bash_tool')}run echo hello`;
/** A first turn without tools: the agent's start and its MCP connections are behind it when the timed turns begin. */
const warmUp = `${scenarioMarker('echo')}hello`;

export async function hostToolLatencies(repetitions: number): Promise<HostToolRow[]> {
  const server = await startFakeModelServer();
  const pi = await createPiEnv({ baseUrl: server.baseUrl });
  const claude = createClaudeEnv({ baseUrl: server.baseUrl });
  const claudeExe = claudeExecutable();
  const codex = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
  const gemini = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'recall', maxAttempts: 1 });
  const geminiExe = geminiCommand();
  const qwen = createQwenEnv({ baseUrl: server.openaiBaseUrl });
  const qwenExe = qwenCommand();
  const allow = { permission: 'allow-all' as const };
  const agents: Agent[] = [
    {
      name: 'pi',
      session: (tag, tools) =>
        piSession({ executable: benchFile('../node_modules/.bin/pi'), provider: OPENAI_PROVIDER, model: 'recall', session: 'none', cwd: pi.cwd, env: { ...pi.env, ...tag.env }, tools, ...allow }),
      cleanup: () => pi.cleanup(),
    },
    {
      name: 'Claude Code',
      session: (tag, tools) =>
        claudeCodeSession({ executable: claudeExe.command, executableArgs: claudeExe.args, model: 'recall', cwd: claude.cwd, env: { ...claude.env, ...tag.env }, tools, ...allow }),
      cleanup: () => claude.cleanup(),
    },
    {
      name: 'Codex',
      session: (tag, tools) => codexSession({ cwd: codex.cwd, env: { ...codex.env, ...tag.env }, extraArgs: ['-c', codex.baseUrlOverride('recall')], tools, ...allow }),
      cleanup: () => codex.cleanup(),
    },
    {
      name: 'Gemini CLI',
      session: (tag, tools) =>
        geminiSession({ executable: geminiExe.command, executableArgs: geminiExe.args, approvalMode: 'default', cwd: gemini.cwd, env: { ...gemini.env, ...tag.env }, tools, ...allow }),
      cleanup: () => gemini.cleanup(),
    },
    {
      name: 'Qwen Code',
      session: (tag, tools) =>
        qwenSession({ executable: qwenExe.command, executableArgs: qwenExe.args, model: 'recall', approvalMode: 'default', cwd: qwen.cwd, env: { ...qwen.env, ...tag.env }, tools, ...allow }),
      cleanup: () => qwen.cleanup(),
    },
  ];
  const rows: HostToolRow[] = [];
  try {
    for (const agent of agents) rows.push(await measure(agent, repetitions));
  } finally {
    await server.close();
    for (const agent of agents) await agent.cleanup();
  }
  return rows;
}

/** One turn: its prompt sent, timed to its end, and its tool's call timed from `tool.call` to its end. */
async function timedTurn(session: OperatorFunction<SessionCommand, SessionMessage>, prompts: readonly string[], agent: string): Promise<{ readonly call: number; readonly turn: number }[]> {
  const commands = new Subject<SessionCommand>();
  const times: { readonly call: number; readonly turn: number }[] = [];
  await new Promise<void>((resolve, reject) => {
    let sent = 0;
    let callAt = 0;
    let call = Number.NaN;
    const next = (): void => {
      const prompt = prompts[times.length];
      if (prompt === undefined) {
        commands.complete();
        return;
      }
      sent = performance.now();
      call = Number.NaN;
      commands.next({ type: 'prompt', text: prompt });
    };
    const timer = setTimeout(() => {
      subscription.unsubscribe();
      reject(new Error(`${agent}: no turn end within 120 s`));
    }, 120_000);
    const subscription = commands.pipe(session).subscribe({
      next: (message) => {
        if (message.type === 'tool.call') callAt = performance.now();
        if (message.type === 'tool.completed' || message.type === 'tool.failed') call = performance.now() - callAt;
        if (message.type === 'turn.completed' || message.type === 'turn.failed') {
          check(message.type === 'turn.completed' && (times.length === 0 || !Number.isNaN(call)), `${agent}: turn ${String(times.length + 1)} ended without its tool's call (${message.type})`);
          times.push({ call, turn: performance.now() - sent });
          next();
        }
      },
      error: (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
      complete: () => {
        clearTimeout(timer);
        resolve();
      },
    });
    next();
  });
  return times;
}

async function measure(agent: Agent, repetitions: number): Promise<HostToolRow> {
  const tag = createProcessTag('AGENT_RX_BENCH_HOST_TOOLS');
  const host: { call: number[]; turn: number[] } = { call: [], turn: [] };
  const shell: { call: number[]; turn: number[] } = { call: [], turn: [] };
  for (let i = 0; i < repetitions; i += 1) {
    const hostFirst = i % 2 === 0;
    const [, first, second] = await timedTurn(agent.session(tag, [sayHello]), [warmUp, ...(hostFirst ? [hostPrompt, shellPrompt] : [shellPrompt, hostPrompt])], agent.name);
    const [withHost, withShell] = hostFirst ? [first, second] : [second, first];
    check(withHost !== undefined && withShell !== undefined, `${agent.name}: two turns`);
    host.call.push(withHost.call);
    host.turn.push(withHost.turn);
    shell.call.push(withShell.call);
    shell.turn.push(withShell.turn);
  }
  const left = await tag.waitUntilNone(30_000);
  check(left.length === 0, `${agent.name}: processes left after the benchmark: ${left.map((entry) => `${String(entry.pid)} ${entry.comm}`).join(', ')}`);
  return {
    agent: agent.name,
    hostCall: summarize(host.call),
    shellCall: summarize(shell.call),
    ratio: ratios(host.call, shell.call),
    turnRatio: ratios(host.turn, shell.turn),
    hostTurn: summarize(host.turn),
    shellTurn: summarize(shell.turn),
  };
}
