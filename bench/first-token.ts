import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject, type Observable, type OperatorFunction } from 'rxjs';
import {
  AGENTS,
  createAgentPool,
  claudeCodeSession,
  codexSession,
  geminiSession,
  piSession,
  qwenSession,
  runClaudeCode,
  runCodex,
  runGemini,
  runPi,
  runQwen,
  type AgentDefinition,
  type AgentPool,
  type RunOverlay,
  type CliMessage,
  type SessionCommand,
  type SessionMessage,
} from '../lib/index.js';
import { claudeExecutable, createClaudeEnv } from '../spec/conformance/claude-env.js';
import { createCodexEnv } from '../spec/conformance/codex-env.js';
import { createGeminiEnv, geminiCommand } from '../spec/conformance/gemini-env.js';
import { scenarioMarker, startFakeModelServer, type FakeModelServer } from '../spec/conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER } from '../spec/conformance/pi-env.js';
import { createQwenEnv, qwenCommand } from '../spec/conformance/qwen-env.js';
import { createProcessTag, type ProcessTag } from '../spec/helpers/tagged-processes.js';
import { programOf } from '../lib/agents/shared/setup/find-executable.js';
import { runInvocation } from '../lib/sources/run-agent.js';
import { benchFile, check, summarize, type Summary } from './util.js';

/**
 * The time to the first word, per agent, on the real CLIs and the fake model server on 127.0.0.1:
 * from `subscribe` to the first `assistant` message of a one-shot run; from `subscribe` (the prompt
 * sent at once) to the first `assistant` of a session's first turn; from the `prompt` command to
 * the first `assistant` of its second turn. The baseline in the same run: the model server's own
 * time to first byte, a streaming request of the same scenario made straight to it.
 */
export interface FirstTokenRow {
  readonly agent: string;
  /** A run: subscribe → first `assistant`, ms. */
  readonly run: Summary;
  /** Of that, subscribe → the agent's model request reaching the server (its start-up), ms. */
  readonly runStart: Summary;
  /** A session: subscribe and prompt → first `assistant` of turn 1, ms. */
  readonly firstTurn: Summary;
  /** A session: the prompt of turn 2 → its first `assistant`, ms. */
  readonly laterTurn: Summary;
  /** A session taken from a pool (its process started and idle): subscribe and prompt → first `assistant`, ms. */
  readonly pooledTurn: Summary;
  /** A run taken from a pool: subscribe → first `assistant`, ms. */
  readonly pooledRun: Summary;
  /** The resident memory of a pooled process (its whole tree) while it waits, idle, MB. */
  readonly idleRss: Summary;
  /** A run read to its end: subscribe → its terminal message, ms. */
  readonly runEnd: Summary;
  /** The baseline for it: the same command, arguments, environment and stdin spawned bare (`child_process.spawn`, stdout read and dropped) → its exit, ms. */
  readonly bareEnd: Summary;
  /** Of that, spawn → the model request reaching the server, ms. */
  readonly bareStart: Summary;
  /** Each run's time to its end over the bare spawn's that followed it. */
  readonly runOverBare: Summary;
}

/** The result: the model server's own time to first byte, and a row per agent. */
export interface FirstTokenResult {
  /** A streaming request straight to the fake model server → its first body bytes, ms. */
  readonly model: Summary;
  readonly rows: readonly FirstTokenRow[];
}

interface Agent {
  readonly name: string;
  run(tag: ProcessTag): Observable<CliMessage>;
  /** The command a run of the same options starts, as its definition makes it. */
  bare(tag: ProcessTag): BareCommand;
  session(tag: ProcessTag): OperatorFunction<SessionCommand, SessionMessage>;
  /** A pool of one process, with the session's options. */
  pool(tag: ProcessTag): AgentPool;
  cleanup(): Promise<void>;
}

interface BareCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdin: string | undefined;
  /** The folder of settings the run makes first (Qwen Code's), made before the bare spawn's clock starts. */
  readonly overlay: RunOverlay | undefined;
}

const prompt = `${scenarioMarker('text')}Say hello.`;

/** The process a run of `options` starts, without the library: its program, arguments, folder, environment and stdin. */
function bareCommand<RunOptions, SessionOptions, Setup>(definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>, options: RunOptions): BareCommand {
  const invocation = runInvocation(definition, options);
  if ('asSession' in invocation) throw new Error(`a ${definition.name} run of the text prompt is a session`);
  const overlay = invocation.setup === undefined ? undefined : definition.setup?.overlay?.(invocation.setup);
  if (invocation.setup !== undefined && (overlay === undefined || definition.setup?.messages !== undefined)) throw new Error(`a ${definition.name} run of the text prompt has a setup step a bare spawn cannot copy`);
  const program = programOf(definition, invocation.executable, invocation.processOptions);
  const { stdin } = program.processOptions;
  if (stdin !== undefined && typeof stdin !== 'string') throw new Error(`a ${definition.name} run of the text prompt writes stdin as it goes`);
  return { command: program.command, args: [...program.args, ...invocation.args], cwd: program.processOptions.cwd, env: { ...process.env, ...program.processOptions.env }, stdin, overlay };
}

/** Spawns `bare` and reads its stdout to the end: the time until it exits (0, else a rejection with its stderr's end), ms. */
async function bareRun(bare: BareCommand): Promise<number> {
  if (bare.overlay === undefined) return bareSpawn(bare, [], bare.env);
  // In a folder of its own: the library's per-host folder is not this process's to use.
  const parent = mkdtempSync(join(tmpdir(), 'agent-rx-bench-bare-'));
  try {
    const made = bare.overlay.create(bare.env, parent);
    const env = bare.overlay.env === undefined ? bare.env : { ...bare.env, [bare.overlay.env]: made.dir };
    return await bareSpawn(bare, bare.overlay.args?.(made.dir) ?? [], env);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

function bareSpawn(bare: BareCommand, extraArgs: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bare.command, [...bare.args, ...extraArgs], { cwd: bare.cwd, env, stdio: [bare.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${bare.command} did not exit within 120 s`));
    }, 120_000);
    child.stdout?.resume();
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    if (bare.stdin !== undefined) child.stdin?.end(bare.stdin);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const elapsed = performance.now() - started;
      if (code === 0) resolve(elapsed);
      else reject(new Error(`${bare.command} ${bare.args.join(' ')} ended ${signal ?? `with exit code ${String(code)}`}: ${stderr}`));
    });
  });
}

/** Subscribes to `run` and reads it to its terminal message: the time, ms. */
function runToEnd(run: Observable<CliMessage>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    run.subscribe({
      error: (error: unknown) => { reject(error instanceof Error ? error : new Error(String(error))); },
      complete: () => { resolve(performance.now() - started); },
    });
  });
}

export async function firstTokenLatencies(repetitions: number): Promise<FirstTokenResult> {
  const server = await startFakeModelServer();
  const pi = await createPiEnv({ baseUrl: server.baseUrl });
  const claude = createClaudeEnv({ baseUrl: server.baseUrl });
  const claudeExe = claudeExecutable();
  const codex = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
  const gemini = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'text', maxAttempts: 1 });
  const geminiExe = geminiCommand();
  const qwen = createQwenEnv({ baseUrl: server.openaiBaseUrl });
  const qwenExe = qwenCommand();
  const piOptions = (tag: ProcessTag) => ({ executable: benchFile('../node_modules/.bin/pi'), provider: OPENAI_PROVIDER, model: 'text', session: 'none' as const, cwd: pi.cwd, env: { ...pi.env, ...tag.env } });
  const claudeOptions = (tag: ProcessTag) => ({ executable: claudeExe.command, executableArgs: claudeExe.args, model: 'text', cwd: claude.cwd, env: { ...claude.env, ...tag.env } });
  const codexOptions = (tag: ProcessTag) => ({ cwd: codex.cwd, env: { ...codex.env, ...tag.env }, extraArgs: ['-c', codex.baseUrlOverride('text')] });
  const geminiOptions = (tag: ProcessTag) => ({ executable: geminiExe.command, executableArgs: geminiExe.args, cwd: gemini.cwd, env: { ...gemini.env, ...tag.env } });
  const qwenOptions = (tag: ProcessTag) => ({ executable: qwenExe.command, executableArgs: qwenExe.args, model: 'text', cwd: qwen.cwd, env: { ...qwen.env, ...tag.env } });
  const pool = <SessionOptions>(agent: Parameters<typeof createAgentPool<unknown, SessionOptions, unknown>>[0]['agent'], options: SessionOptions): AgentPool => createAgentPool({ agent, options, size: 1 });
  const agents: Agent[] = [
    { name: 'pi', bare: (tag) => bareCommand(AGENTS.pi, { ...piOptions(tag), prompt }), run: (tag) => runPi({ ...piOptions(tag), prompt }), session: (tag) => piSession(piOptions(tag)), pool: (tag) => pool(AGENTS.pi, piOptions(tag)), cleanup: () => pi.cleanup() },
    { name: 'Claude Code', bare: (tag) => bareCommand(AGENTS.claude, { ...claudeOptions(tag), prompt }), run: (tag) => runClaudeCode({ ...claudeOptions(tag), prompt }), session: (tag) => claudeCodeSession(claudeOptions(tag)), pool: (tag) => pool(AGENTS.claude, claudeOptions(tag)), cleanup: () => claude.cleanup() },
    { name: 'Codex', bare: (tag) => bareCommand(AGENTS.codex, { ...codexOptions(tag), prompt }), run: (tag) => runCodex({ ...codexOptions(tag), prompt }), session: (tag) => codexSession(codexOptions(tag)), pool: (tag) => pool(AGENTS.codex, codexOptions(tag)), cleanup: () => codex.cleanup() },
    { name: 'Gemini CLI', bare: (tag) => bareCommand(AGENTS.gemini, { ...geminiOptions(tag), prompt }), run: (tag) => runGemini({ ...geminiOptions(tag), prompt }), session: (tag) => geminiSession(geminiOptions(tag)), pool: (tag) => pool(AGENTS.gemini, geminiOptions(tag)), cleanup: () => gemini.cleanup() },
    { name: 'Qwen Code', bare: (tag) => bareCommand(AGENTS.qwen, { ...qwenOptions(tag), prompt }), run: (tag) => runQwen({ ...qwenOptions(tag), prompt }), session: (tag) => qwenSession(qwenOptions(tag)), pool: (tag) => pool(AGENTS.qwen, qwenOptions(tag)), cleanup: () => qwen.cleanup() },
  ];
  try {
    const model: number[] = [];
    for (let i = 0; i < repetitions; i += 1) model.push(await modelFirstByte(server));
    const rows: FirstTokenRow[] = [];
    for (const agent of agents) rows.push(await measure(agent, server, repetitions));
    return { model: summarize(model), rows };
  } finally {
    await server.close();
    for (const agent of agents) await agent.cleanup();
  }
}

/** A streaming chat-completions request of the `text` scenario straight to the server → its first body bytes, ms. */
async function modelFirstByte(server: FakeModelServer): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({ model: 'text', stream: true, messages: [{ role: 'user', content: 'Say hello.' }] }),
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  await reader.read();
  const elapsed = performance.now() - started;
  await reader.cancel();
  return elapsed;
}

/**
 * Waits until the tagged processes are up and idle: some run, and their CPU time (user + system,
 * in clock ticks) has not grown for 300 ms. At most 30 s.
 */
async function idle(tag: ProcessTag): Promise<void> {
  const cpu = (): number =>
    tag.processes().reduce((sum, entry) => {
      try {
        const fields = readFileSync(`/proc/${String(entry.pid)}/stat`, 'latin1').split(') ')[1]?.split(' ') ?? [];
        return sum + Number(fields[11]) + Number(fields[12]);
      } catch {
        return sum;
      }
    }, 0);
  const deadline = performance.now() + 30_000;
  let last = -1;
  let since = performance.now();
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = cpu();
    if (tag.processes().length === 0 || now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= 300) return;
  }
  throw new Error('the pooled agent did not become idle within 30 s');
}

/** The resident memory of the tagged processes, MB (VmRSS, summed). */
function rssMb(tag: ProcessTag): number {
  let kb = 0;
  for (const entry of tag.processes()) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${String(entry.pid)}/status`, 'latin1'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return kb / 1024;
}

/** Resolves with the time of the first message `match` accepts (performance.now()), rejecting after 120 s. */
function firstOf<T extends { readonly type: string }>(messages: Observable<T>, match: (message: T) => boolean, what: string): { readonly at: Promise<number>; stop(): void } {
  let stop = (): void => undefined;
  const at = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      subscription.unsubscribe();
      reject(new Error(`no ${what} within 120 s`));
    }, 120_000);
    const subscription = messages.subscribe({
      next: (message) => {
        if (match(message)) {
          clearTimeout(timer);
          resolve(performance.now());
        }
      },
      error: (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    });
    stop = () => {
      clearTimeout(timer);
      subscription.unsubscribe();
    };
  });
  return { at, stop: () => { stop(); } };
}

/** One session: the first turn's prompt sent at subscribe, the second's when the first ended; each to its first `assistant`, ms. */
function sessionTurns(agent: Agent, tag: ProcessTag, pool?: AgentPool): Promise<{ readonly first: number; readonly later: number }> {
  const commands = new Subject<SessionCommand>();
  return new Promise((resolve, reject) => {
    const times: number[] = [];
    let sent = 0;
    let waiting = true;
    const timer = setTimeout(() => {
      subscription.unsubscribe();
      reject(new Error(`${agent.name}: a session's two turns did not end within 120 s`));
    }, 120_000);
    const send = (): void => {
      waiting = true;
      sent = performance.now();
      commands.next({ type: 'prompt', text: prompt });
    };
    const subscription = commands.pipe(pool === undefined ? agent.session(tag) : pool.session()).subscribe({
      next: (message) => {
        if (message.type === 'assistant' && waiting) {
          waiting = false;
          times.push(performance.now() - sent);
        }
        if (message.type === 'turn.completed' || message.type === 'turn.failed') {
          if (times.length === 1) send();
          else commands.complete();
        }
      },
      error: (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
      complete: () => {
        clearTimeout(timer);
        const [first, later] = times;
        if (first === undefined || later === undefined) reject(new Error(`${agent.name}: a session turn without text`));
        else resolve({ first, later });
      },
    });
    send();
  });
}

async function measure(agent: Agent, server: FakeModelServer, repetitions: number): Promise<FirstTokenRow> {
  const tag = createProcessTag('AGENT_RX_BENCH_FIRST_TOKEN');
  const runs: number[] = [];
  const starts: number[] = [];
  const firstTurns: number[] = [];
  const laterTurns: number[] = [];
  const pooledTurns: number[] = [];
  const pooledRuns: number[] = [];
  const idleRss: number[] = [];
  const runEnds: number[] = [];
  const bareEnds: number[] = [];
  const bareStarts: number[] = [];
  const runOverBare: number[] = [];
  const assistant = (message: { readonly type: string }): boolean => message.type === 'assistant';
  for (let i = 0; i < repetitions; i += 1) {
    const from = server.requests.length;
    const wall = Date.now();
    const started = performance.now();
    const run = firstOf(agent.run(tag), assistant, `${agent.name}: a run's first text`);
    runs.push((await run.at) - started);
    const request = server.requests.slice(from).find((entry) => entry.method === 'POST');
    check(request !== undefined, `${agent.name}: the run asked the model`);
    starts.push(request.at - wall);
    run.stop();

    const { first, later } = await sessionTurns(agent, tag);
    firstTurns.push(first);
    laterTurns.push(later);

    // From a pool of one: each take waits until the waiting process is up and idle.
    const pool = agent.pool(tag);
    await idle(tag);
    idleRss.push(rssMb(tag));
    pooledTurns.push((await sessionTurns(agent, tag, pool)).first);
    await idle(tag);
    const pooledStart = performance.now();
    const pooled = firstOf(pool.run(prompt), assistant, `${agent.name}: a pooled run's first text`);
    pooledRuns.push((await pooled.at) - pooledStart);
    pooled.stop();
    await pool.close();

    // A run to its end against the same process spawned bare, in turns.
    runEnds.push(await runToEnd(agent.run(tag)));
    const bareFrom = server.requests.length;
    const bareWall = Date.now();
    bareEnds.push(await bareRun(agent.bare(tag)));
    runOverBare.push((runEnds.at(-1) ?? 0) / (bareEnds.at(-1) ?? 1));
    const bareRequest = server.requests.slice(bareFrom).find((entry) => entry.method === 'POST');
    check(bareRequest !== undefined, `${agent.name}: the bare spawn asked the model`);
    bareStarts.push(bareRequest.at - bareWall);
  }
  const left = await tag.waitUntilNone(30_000);
  check(left.length === 0, `${agent.name}: processes left after the benchmark: ${left.map((entry) => `${String(entry.pid)} ${entry.comm}`).join(', ')}`);
  return { agent: agent.name, run: summarize(runs), runStart: summarize(starts), firstTurn: summarize(firstTurns), laterTurn: summarize(laterTurns), pooledTurn: summarize(pooledTurns), pooledRun: summarize(pooledRuns), idleRss: summarize(idleRss), runEnd: summarize(runEnds), bareEnd: summarize(bareEnds), bareStart: summarize(bareStarts), runOverBare: summarize(runOverBare) };
}
