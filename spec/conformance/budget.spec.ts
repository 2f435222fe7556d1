import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import { budget, claudeCodeSession, piSession, retryAgentRun, runClaudeCode, runGemini, runPi, stopAllRuns, type CliMessage, type ConversationSnapshot, type SessionMessage, type StopReport, type TerminalFailed } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { claudeExecutable, createClaudeEnv, type ClaudeEnv } from './claude-env.js';
import { ENDLESS_TEXT_PIECES, LOOP_TOOL_COMMAND, scenarioMarker, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createGeminiEnv, geminiCommand, GEMINI_MODEL, type GeminiEnv } from './gemini-env.js';
import { createPiEnv, OPENAI_PROVIDER, piCommand, type PiEnv } from './pi-env.js';
import { SessionDriver } from './session-driver.js';

/**
 * Budgets on real agents (pi, Claude Code) against the fake model server: a long answer stopped at
 * a token limit, a tool loop stopped at a tool-call limit, a session's turn aborted at its limit
 * while the session goes on. Each stopped agent is checked gone by its pid.
 */

const PI = piCommand();
const CLAUDE = claudeExecutable();
const GEMINI = geminiCommand();
const TAG = createProcessTag('AGENT_RX_BUDGET');

let server: FakeModelServer;
let pi: PiEnv;
let claude: ClaudeEnv;
let gemini: GeminiEnv;

beforeAll(async () => {
  server = await startFakeModelServer();
  pi = await createPiEnv({ baseUrl: server.baseUrl });
  claude = createClaudeEnv({ baseUrl: server.baseUrl });
  gemini = createGeminiEnv({ baseUrl: server.baseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await pi.cleanup();
  await claude.cleanup();
  await gemini.cleanup();
});

const piRun = (model: string, onStopped: (report: StopReport) => void): Observable<CliMessage> =>
  runPi({ prompt: `Scenario ${model} please`, executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model, session: 'none', cwd: pi.cwd, env: { ...pi.env, ...TAG.env }, onStopped });

const claudeRun = (model: string, onStopped: (report: StopReport) => void): Observable<CliMessage> =>
  runClaudeCode({ prompt: `Scenario ${model} please`, executable: CLAUDE.command, executableArgs: CLAUDE.args, model, cwd: claude.cwd, env: { ...claude.env, ...TAG.env }, allowedTools: ['Bash'], onStopped });

/** The run's messages and its stop report. */
async function runOf(start: (onStopped: (report: StopReport) => void) => Observable<CliMessage>): Promise<{ messages: CliMessage[]; report: StopReport }> {
  let reported!: (report: StopReport) => void;
  const report = new Promise<StopReport>((resolve) => (reported = resolve));
  const messages = await lastValueFrom(start(reported).pipe(toArray()));
  return { messages, report: await report };
}

const answerOf = (messages: readonly SessionMessage[]): string => messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('');

describe.each([
  ['pi', piRun],
  ['Claude Code', claudeRun],
])('a budget on a %s run', (_agent, start) => {
  it('stops a long answer at its token limit, the graceful way: the agent is gone, and the terminal says which limit and the figures', async () => {
    const began = performance.now();
    const { messages, report } = await runOf((onStopped) => start('endless_text', onStopped).pipe(budget({ tokens: 400 })));
    const terminal = messages.at(-1) as TerminalFailed;
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'tokens', max: 400, per: 'total' } });
    expect(terminal.budget?.used).toBeGreaterThan(400);
    // No usage was reported yet: the figure is the streamed text's estimate.
    expect(terminal.budget?.spent.estimatedTokens).toBe(terminal.budget?.used);
    expect(terminal.message).toMatch(/ run was stopped: the budget of 400 tokens was spent \(\d+ tokens used, \d+ of them estimated\)$/);
    // Stopped by the library, not by itself; a minute of text cut short.
    expect(report).toMatchObject({ requested: true, cause: 'budget', exitedGracefully: true, confirmed: true });
    expect(report.pid).not.toBeNull();
    expect(isAlive(report.pid ?? 0)).toBe(false);
    expect(answerOf(messages).length).toBeLessThan(ENDLESS_TEXT_PIECES * 5);
    expect(performance.now() - began).toBeLessThan(40_000);
  });

  it('stops a tool loop at its tool-call limit: the call after the last allowed one', async () => {
    const { messages, report } = await runOf((onStopped) => start('tool_loop', onStopped).pipe(budget({ toolCalls: 2 })));
    const terminal = messages.at(-1) as TerminalFailed;
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'toolCalls', max: 2, used: 3, spent: { toolCalls: 3 } } });
    const calls = messages.filter((message) => message.type === 'tool.call');
    expect(calls).toHaveLength(3);
    expect(JSON.stringify(calls[0])).toContain(LOOP_TOOL_COMMAND);
    expect(report).toMatchObject({ cause: 'budget', confirmed: true });
    expect(isAlive(report.pid ?? 0)).toBe(false);
  });
});

describe('a budget on a session', () => {
  it.each([
    ['pi', (onStopped: (report: StopReport) => void) => piSession({ executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'recall', session: 'none', cwd: pi.cwd, env: { ...pi.env, ...TAG.env }, onStopped })],
    ['Claude Code', (onStopped: (report: StopReport) => void) => claudeCodeSession({ executable: CLAUDE.command, executableArgs: CLAUDE.args, model: 'recall', cwd: claude.cwd, env: { ...claude.env, ...TAG.env }, allowedTools: ['Bash'], onStopped })],
  ])('aborts a %s turn at its per-turn tool-call limit, and the session goes on with the next turn', async (_name, session) => {
    const driver = new SessionDriver((onStopped) => (commands) => commands.pipe(session(onStopped), budget({ toolCalls: 2, per: 'turn' })));
    driver.send({ type: 'prompt', text: `${scenarioMarker('tool_loop')}Loop, please` });
    const failed = await driver.nextOf('turn.failed');
    expect(failed).toMatchObject({ turn: 1, reason: 'budget', budget: { limit: 'toolCalls', max: 2, used: 3, per: 'turn' } });
    expect(failed.message).toMatch(/^the turn's budget of 2 tool calls was spent \(3 tool calls used\): the turn was aborted$/);
    driver.send({ type: 'prompt', text: 'And now just answer' });
    const completed = await driver.nextOf('turn.completed');
    expect(completed.turn).toBe(2);
    driver.end();
    const messages = await driver.done;
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    // The second turn's answer is whole: the session kept its process and its conversation.
    expect(answerOf(messages.slice(messages.indexOf(failed)))).toContain('And now just answer');
  });
});

describe('a budget on a run made as a one-prompt session (pi with permission)', () => {
  it("aborts the session's turn, and the run ends with reason budget and the figures", async () => {
    const { messages, report } = await runOf((onStopped) =>
      runPi({ prompt: 'Scenario tool_loop please', executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'tool_loop', session: 'none', cwd: pi.cwd, env: { ...pi.env, ...TAG.env }, permission: 'allow-all', budget: { toolCalls: 1 }, onStopped }),
    );
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'toolCalls', max: 1, used: 2 } });
    // A run's messages: the session's turn is not shown.
    expect(messages.map((message) => message.type as string)).not.toContain('turn.failed');
    expect(isAlive(report.pid ?? 0)).toBe(false);
  });
});

describe('a budget on a session that sleeps', () => {
  it("reaches the process that woke the session: a per-turn limit aborts the woken process's turn", async () => {
    const store = new Map<string, ConversationSnapshot>();
    const driver = new SessionDriver((onStopped) =>
      piSession({
        executable: PI.command,
        executableArgs: PI.args,
        provider: OPENAI_PROVIDER,
        model: 'recall',
        session: 'new',
        cwd: pi.cwd,
        env: { ...pi.env, ...TAG.env },
        onStopped,
        idleMs: 300,
        store: {
          load: (id) => Promise.resolve(store.get(id)),
          save: (id, snapshot) => {
            store.set(id, snapshot);
            return Promise.resolve();
          },
        },
        budget: { toolCalls: 1, per: 'turn' },
      }),
    );
    driver.send({ type: 'prompt', text: 'one' });
    await driver.nextOf('turn.completed');
    await driver.nextOf('session.passivated');
    // A command sent from the test's own context (not the session's) wakes a new process.
    driver.send({ type: 'prompt', text: `${scenarioMarker('tool_loop')}loop` });
    await driver.nextOf('session.resumed');
    expect(await driver.nextOf('turn.failed')).toMatchObject({ turn: 2, reason: 'budget', budget: { limit: 'toolCalls', max: 1, used: 2, per: 'turn' } });
    driver.end();
    expect((await driver.done).at(-1)?.type).toBe('terminal.completed');
  });
});

describe('a budget around a retry', () => {
  it('is not retried: the budget failure ends the run at once', async () => {
    const { messages } = await runOf((onStopped) => piRun('tool_loop', onStopped).pipe(retryAgentRun({ maxAttempts: 3 }), budget({ toolCalls: 0 })));
    expect(messages.filter((message) => message.type === 'run.retrying')).toHaveLength(0);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'toolCalls', used: 1 } });
  });
});

describe('a budget as a run or session option', () => {
  it('gives Claude Code its own spending cap as a second line: a tool loop ends at it, with reason budget and what it spent', async () => {
    const { messages, report } = await runOf((onStopped) =>
      runClaudeCode({ prompt: 'Scenario tool_loop please', executable: CLAUDE.command, executableArgs: CLAUDE.args, model: 'tool_loop', cwd: claude.cwd, env: { ...claude.env, ...TAG.env }, allowedTools: ['Bash'], budget: { costUsd: 0.0005 }, onStopped }),
    );
    const terminal = messages.at(-1) as TerminalFailed;
    // The fake server's calls cost about $0.0003 each at Claude Code's prices: the second one crosses $0.0005.
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'budget', agentError: 'Reached maximum budget ($0.0005)' });
    expect(terminal.message).toMatch(/^Claude Code ended the run at its own spending cap \(--max-budget-usd\): \$0\.000\d spent$/);
    // Claude Code ended it itself: nothing was stopped.
    expect(report).toMatchObject({ requested: false, cause: null });
    expect(messages.filter((message) => message.type === 'tool.call').length).toBeLessThan(3);
  });

  it('applies the budget option of a pi run and of a pi session as the operator does', async () => {
    const { messages } = await runOf((onStopped) =>
      runPi({ prompt: 'Scenario tool_loop please', executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'tool_loop', session: 'none', cwd: pi.cwd, env: { ...pi.env, ...TAG.env }, budget: { toolCalls: 1 }, onStopped }),
    );
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'toolCalls', max: 1, used: 2 } });
    const driver = new SessionDriver((onStopped) =>
      piSession({ executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'recall', session: 'none', cwd: pi.cwd, env: { ...pi.env, ...TAG.env }, budget: { turns: 1 }, onStopped }),
    );
    driver.send({ type: 'prompt', text: 'one' });
    await driver.nextOf('turn.completed');
    driver.send({ type: 'prompt', text: 'two' });
    expect(await driver.nextOf('turn.failed')).toMatchObject({ turn: 2, reason: 'budget', budget: { limit: 'turns', max: 1, used: 2 } });
    driver.send({ type: 'prompt', text: `${scenarioMarker('text')}three` });
    expect(await driver.nextOf('turn.failed')).toMatchObject({ turn: 3, reason: 'budget' });
    driver.end();
    expect((await driver.done).at(-1)?.type).toBe('terminal.completed');
  });
});

describe('a budget priced by model', () => {
  // $0.01 an output token: $2 is about 200 tokens of streamed text, a fraction of the endless answer.
  const prices = { endless: { input: 0, output: 10_000 }, 'some-other-model': { input: 1, output: 1 } };

  it('prices the model a pi run asks for (pi says none): the longest id it starts with, and the run is stopped at the cost', async () => {
    const { messages, report } = await runOf((onStopped) =>
      runPi({ prompt: 'Scenario endless_text please', executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'endless_text', session: 'none', cwd: pi.cwd, env: { ...pi.env, ...TAG.env }, budget: { costUsd: 2, prices }, onStopped }),
    );
    expect(messages[0]).not.toHaveProperty('model');
    const terminal = messages.at(-1) as TerminalFailed;
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'costUsd', max: 2 } });
    expect(terminal.budget?.used).toBeGreaterThan(2);
    // Every token estimated, at the table's output price.
    expect(terminal.budget?.used).toBeCloseTo(((terminal.budget?.spent.estimatedTokens ?? 0) * 10_000) / 1e6, 6);
    expect(isAlive(report.pid ?? 0)).toBe(false);
  });

  it("prices the model Claude Code says it uses (session.started's model), the caller's table before the CLI's own cost", async () => {
    const { messages, report } = await runOf((onStopped) => claudeRun('endless_text', onStopped).pipe(budget({ costUsd: 2, prices })));
    expect(messages[0]).toMatchObject({ type: 'session.started', model: 'endless_text' });
    const terminal = messages.at(-1) as TerminalFailed;
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'costUsd', max: 2 } });
    expect(report).toMatchObject({ requested: true, cause: 'budget', confirmed: true });
    expect(isAlive(report.pid ?? 0)).toBe(false);
  });

  it('stops a Gemini CLI run whose model the table does not price as it starts, saying the model (Gemini CLI reports no cost)', async () => {
    const { messages, report } = await runOf((onStopped) =>
      runGemini({
        prompt: 'Scenario text please',
        executable: GEMINI.command,
        executableArgs: GEMINI.args,
        cwd: gemini.cwd,
        env: { ...gemini.env, ...TAG.env, GOOGLE_GEMINI_BASE_URL: gemini.baseUrlFor('endless_text') },
        budget: { costUsd: 2, prices },
        onStopped,
      }),
    );
    expect(messages[0]).toMatchObject({ type: 'session.started', model: GEMINI_MODEL });
    const terminal = messages.at(-1) as TerminalFailed;
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'costUsd', unpriced: { model: GEMINI_MODEL } } });
    expect(terminal.message).toContain(`budget.prices has no price for the model "${GEMINI_MODEL}"`);
    expect(answerOf(messages)).toBe('');
    expect(report).toMatchObject({ requested: true, cause: 'budget' });
    expect(isAlive(report.pid ?? 0)).toBe(false);
  });
});
