import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom, type Observable } from 'rxjs';
import { Subject } from 'rxjs';
import { qwenSession, runClaudeCode, runCodex, runGemini, runQwen, stopAllRuns, type CliMessage, type SessionCommand } from '../../lib/index.js';
import { traceRun, traceSession } from '../../lib/otel.js';
import { executableOptions } from './cli-under-test.js';
import { claudeExecutable, createClaudeEnv, type ClaudeEnv } from './claude-env.js';
import { CODEX_FAKE_PROVIDER, createCodexEnv, type CodexEnv } from './codex-env.js';
import { createGeminiEnv, geminiCommand, type GeminiEnv } from './gemini-env.js';
import { createQwenEnv, qwenCommand, type QwenEnv } from './qwen-env.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { eventually } from './suite.js';

/**
 * One trace across the caller, agent-rx and the CLI: the caller's spans exported over OTLP/HTTP to
 * a receiver on 127.0.0.1, the CLI's own telemetry pointed at the same receiver with the
 * `telemetry` option, and its spans found under the run's `invoke_agent` span. Claude Code and
 * Codex read `TRACEPARENT`; Gemini CLI and Qwen Code export to the receiver too, in traces of their own.
 */

const CLAUDE = claudeExecutable();
const GEMINI = geminiCommand();
const QWEN = qwenCommand();
let server: FakeModelServer;
let receiver: OtlpReceiver;
let claude: ClaudeEnv;
let codex: CodexEnv;
let gemini: GeminiEnv;
let qwen: QwenEnv;
let provider: BasicTracerProvider;

beforeAll(async () => {
  server = await startFakeModelServer();
  receiver = await startOtlpReceiver();
  claude = createClaudeEnv({ baseUrl: server.baseUrl });
  codex = createCodexEnv({ baseUrl: server.baseUrl });
  gemini = createGeminiEnv({ baseUrl: server.baseUrl });
  qwen = createQwenEnv({ baseUrl: server.openaiBaseUrl });
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${receiver.endpoint}/v1/traces` }))] });
});

afterAll(async () => {
  await stopAllRuns();
  await provider.shutdown();
  await receiver.close();
  await server.close();
  await claude.cleanup();
  await codex.cleanup();
  await gemini.cleanup();
  await qwen.cleanup();
});

const telemetry = (): { endpoint: string; protocol: 'http/json' } => ({ endpoint: receiver.endpoint, protocol: 'http/json' });

describe.each([
  ['Claude Code', 'claude', () => runClaudeCode({ prompt: 'Scenario bash_tool please', executable: CLAUDE.command, executableArgs: CLAUDE.args, model: 'bash_tool', cwd: claude.cwd, env: claude.env, allowedTools: ['Bash'], telemetry: telemetry() })],
  [
    'Codex',
    'codex',
    () =>
      runCodex({
        prompt: 'Scenario bash_tool please',
        ...executableOptions('codex'),
        cwd: codex.cwd,
        env: codex.env,
        config: { [`model_providers.${CODEX_FAKE_PROVIDER}.base_url`]: server.responsesBaseUrl('bash_tool') },
        sandbox: 'danger-full-access',
        telemetry: telemetry(),
      }),
  ],
] as const)('%s with its telemetry pointed at the collector', (_name, agent, start: () => Observable<CliMessage>) => {
  it("puts its own spans in the run's trace, under the invoke_agent span", async () => {
    const terminal = await lastValueFrom(start().pipe(traceRun({ tracer: provider.getTracer('spec'), agent })));
    expect(terminal.type).toBe('terminal.completed');
    await provider.forceFlush();
    const ours = () => receiver.spans.find((span) => span.name === `invoke_agent ${agent}`);
    await eventually(() => ours() !== undefined, 10_000);
    const run = ours();
    // The CLI flushed its spans before it exited; the receiver may read them a moment later.
    const theirs = () => receiver.spans.filter((span) => span.traceId === run?.traceId && span.service !== 'agent-rx' && !span.name.startsWith('invoke_agent') && !span.name.startsWith('execute_tool'));
    await eventually(() => theirs().some((span) => span.parentSpanId === run?.spanId), 10_000);
    // Our own tool spans are there too, beside the CLI's.
    expect(receiver.spans.filter((span) => span.traceId === run?.traceId && span.name.startsWith('execute_tool')).length).toBeGreaterThan(0);
    const names = new Set(theirs().map((span) => span.name));
    if (agent === 'claude') {
      expect(theirs().find((span) => span.parentSpanId === run?.spanId)?.name).toBe('claude_code.interaction');
      for (const name of ['claude_code.llm_request', 'claude_code.tool']) expect(names).toContain(name);
    } else {
      // Codex traces its own work closely: hundreds of spans for one small run.
      expect(theirs().length).toBeGreaterThan(100);
    }
  });
});

describe.each([
  ['Gemini CLI', 'gemini', () => runGemini({ prompt: 'Scenario text please', executable: GEMINI.command, executableArgs: GEMINI.args, cwd: gemini.cwd, env: { ...gemini.env, GOOGLE_GEMINI_BASE_URL: gemini.baseUrlFor('text') }, telemetry: telemetry() })],
  ['Qwen Code', 'qwen', () => runQwen({ prompt: 'Scenario text please', model: 'text', ...executableOptions('qwen'), cwd: qwen.cwd, env: qwen.env, telemetry: telemetry() })],
] as const)('%s with its telemetry pointed at the collector', (_name, agent, start: () => Observable<CliMessage>) => {
  it('exports its own spans there, in traces of their own: it does not read TRACEPARENT', async () => {
    const before = new Set(receiver.spans);
    const terminal = await lastValueFrom(start().pipe(traceRun({ tracer: provider.getTracer('spec'), agent })));
    expect(terminal.type).toBe('terminal.completed');
    await provider.forceFlush();
    const fresh = () => receiver.spans.filter((span) => !before.has(span));
    const run = () => fresh().find((span) => span.name === `invoke_agent ${agent}`);
    const theirs = () => fresh().filter((span) => !span.name.startsWith('invoke_agent') && !span.name.startsWith('execute_tool'));
    await eventually(() => run() !== undefined && theirs().length > 0, 10_000);
    expect(theirs().some((span) => span.traceId === run()?.traceId)).toBe(false);
  });
});

describe('a Qwen Code session traced with its telemetry pointed at the collector', () => {
  it("puts Qwen Code's spans of a turn under that turn's invoke_agent span: the trace goes in each prompt's ACP _meta", async () => {
    const commands = new Subject<SessionCommand>();
    const ended = lastValueFrom(
      commands.pipe(
        qwenSession({ executable: QWEN.command, executableArgs: QWEN.args, model: 'text', cwd: qwen.cwd, env: qwen.env, telemetry: telemetry() }),
        traceSession({ tracer: provider.getTracer('spec'), agent: 'qwen' }),
      ),
    );
    commands.next({ type: 'prompt', text: 'hello' });
    commands.complete();
    expect((await ended).type).toBe('terminal.completed');
    await provider.forceFlush();
    const turn = () => receiver.spans.find((span) => span.name === 'invoke_agent qwen' && receiver.spans.some((session) => session.name === 'agent_rx.session qwen' && session.spanId === span.parentSpanId));
    await eventually(() => turn() !== undefined, 10_000);
    const theirs = () => receiver.spans.filter((span) => span.traceId === turn()?.traceId && span.parentSpanId === turn()?.spanId && !span.name.startsWith('execute_tool'));
    await eventually(() => theirs().length > 0, 10_000);
    expect(theirs().map((span) => span.name)).toContain('qwen-code.interaction');
  });
});
