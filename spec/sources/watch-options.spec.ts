import { describe, expect, it } from '@jest/globals';
import { AGENTS, createAgentPool, runAgent, agentSession, type AgentDefinition } from '../../lib/index.js';
import { processInvocation } from '../helpers/invocation.js';

// The `budget` and `telemetry` options every agent takes, as each agent's definition makes them:
// what its CLI is given, and what is refused at call time.

const any = (definition: unknown): AgentDefinition<string, Record<string, unknown>, Record<string, unknown>, unknown> => definition as never;
const telemetry = { endpoint: 'http://127.0.0.1:4318/' };

describe('the telemetry option', () => {
  it("gives Claude Code its telemetry switch and the OTLP variables, traces included", () => {
    const invocation = processInvocation(any(AGENTS.claude), { prompt: 'hi', telemetry: { ...telemetry, protocol: 'http/json' }, env: { KEEP: '1' } });
    expect(invocation.processOptions.env).toEqual({
      KEEP: '1',
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
    });
  });

  it("gives Codex its otel configuration, one exporter per signal, beside the caller's own configuration", () => {
    const invocation = processInvocation(any(AGENTS.codex), { prompt: 'hi', telemetry, config: { model_verbosity: 'low' } });
    const config = invocation.args.flatMap((arg, i, all) => (all[i - 1] === '-c' ? [arg] : []));
    expect(config).toEqual([
      'model_verbosity="low"',
      'otel.exporter.otlp-http.endpoint="http://127.0.0.1:4318/v1/logs"',
      'otel.exporter.otlp-http.protocol="binary"',
      'otel.trace_exporter.otlp-http.endpoint="http://127.0.0.1:4318/v1/traces"',
      'otel.trace_exporter.otlp-http.protocol="binary"',
      'otel.metrics_exporter.otlp-http.endpoint="http://127.0.0.1:4318/v1/metrics"',
      'otel.metrics_exporter.otlp-http.protocol="binary"',
    ]);
  });

  it('gives Gemini CLI and Qwen Code their telemetry variables, and refuses a protocol they cannot send', () => {
    expect(processInvocation(any(AGENTS.gemini), { prompt: 'hi', telemetry }).processOptions.env).toMatchObject({ GEMINI_TELEMETRY_ENABLED: 'true', GEMINI_TELEMETRY_OTLP_ENDPOINT: 'http://127.0.0.1:4318', GEMINI_TELEMETRY_OTLP_PROTOCOL: 'http' });
    expect(processInvocation(any(AGENTS.qwen), { prompt: 'hi', telemetry }).processOptions.env).toMatchObject({ QWEN_TELEMETRY_ENABLED: 'true', QWEN_TELEMETRY_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(() => runAgent(any(AGENTS.gemini), { prompt: 'hi', telemetry: { ...telemetry, protocol: 'http/protobuf' } })).toThrow(/Gemini CLI exports its telemetry over OTLP\/HTTP in JSON only/);
  });

  it('is refused for pi, which exports none, and for an endpoint that is not an http URL', () => {
    expect(() => runAgent(any(AGENTS.pi), { prompt: 'hi', telemetry })).toThrow(/pi exports no telemetry of its own: telemetry is not taken/);
    expect(() => agentSession(any(AGENTS.pi), { telemetry })).toThrow(/pi exports no telemetry of its own/);
    expect(() => runAgent(any(AGENTS.claude), { prompt: 'hi', telemetry: { endpoint: 'grpc://127.0.0.1:4317' } })).toThrow(/telemetry.endpoint must be an http\(s\) URL/);
  });
});

describe('the budget option', () => {
  it("sets Claude Code's --max-budget-usd from costUsd, unless the caller set maxBudgetUsd", () => {
    expect(processInvocation(any(AGENTS.claude), { prompt: 'hi', budget: { costUsd: 0.5 } }).args).toEqual(expect.arrayContaining(['--max-budget-usd', '0.5']));
    const own = processInvocation(any(AGENTS.claude), { prompt: 'hi', budget: { costUsd: 0.5 }, maxBudgetUsd: 2 }).args;
    expect(own[own.indexOf('--max-budget-usd') + 1]).toBe('2');
    expect(processInvocation(any(AGENTS.claude), { prompt: 'hi', budget: { costUsd: 0.5, per: 'turn' } }).args).not.toContain('--max-budget-usd');
  });

  it('takes costUsd without a price only where the agent reports its cost', () => {
    expect(() => runAgent(any(AGENTS.claude), { prompt: 'hi', budget: { costUsd: 1 } })).not.toThrow();
    for (const agent of [AGENTS.pi, AGENTS.codex, AGENTS.gemini, AGENTS.qwen]) {
      expect(() => runAgent(any(agent), { prompt: 'hi', budget: { costUsd: 1 } })).toThrow(new RegExp(`${agent.displayName} reports no cost: budget.costUsd needs budget.price or budget.prices`));
      expect(() => runAgent(any(agent), { prompt: 'hi', budget: { costUsd: 1, price: { input: 1, output: 4 } } })).not.toThrow();
    }
  });

  it('checks the model the run asks for against the prices by model, at call time, where the agent reports no cost', () => {
    const prices = { 'gpt-5': { input: 1.25, output: 10 } };
    expect(() => runAgent(any(AGENTS.codex), { prompt: 'hi', model: 'gpt-5-codex', budget: { costUsd: 1, prices } })).not.toThrow();
    expect(() => runAgent(any(AGENTS.codex), { prompt: 'hi', model: 'o4-mini', budget: { costUsd: 1, prices } })).toThrow(
      /budget.prices has no price for the model "o4-mini" \(it has gpt-5\) and Codex reports no cost/,
    );
    expect(() => agentSession(any(AGENTS.pi), { model: 'o4-mini', budget: { costUsd: 1, prices } })).toThrow(/no price for the model "o4-mini"/);
    // A price for the rest, or an agent that reports its cost: nothing to refuse.
    expect(() => runAgent(any(AGENTS.codex), { prompt: 'hi', model: 'o4-mini', budget: { costUsd: 1, prices, price: { input: 1, output: 4 } } })).not.toThrow();
    expect(() => runAgent(any(AGENTS.claude), { prompt: 'hi', model: 'o4-mini', budget: { costUsd: 1, prices } })).not.toThrow();
    expect(() => runAgent(any(AGENTS.gemini), { prompt: 'hi', budget: { costUsd: 1, prices: { 'gemini-2.5-pro': { input: 1 } } } })).toThrow(/budget.prices/);
  });

  it('checks the limits at call time, for runs and sessions, and is not pooled', () => {
    expect(() => runAgent(any(AGENTS.codex), { prompt: 'hi', budget: { tokens: -1 } })).toThrow(/budget.tokens must be a number > 0/);
    expect(() => agentSession(any(AGENTS.codex), { budget: { turns: 2, per: 'turn' } })).toThrow(/cannot be a limit per turn/);
    expect(() => runAgent(any(AGENTS.codex), { prompt: 'hi', budget: { tokenz: 5 } })).toThrow(/has no option "tokenz"/);
    expect(() => createAgentPool({ agent: any(AGENTS.pi), options: { budget: { turns: 1 } } })).toThrow(/a budget is not pooled/);
  });
});
