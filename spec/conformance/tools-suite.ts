import { afterEach, expect, it } from '@jest/globals';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray, type Observable, type OperatorFunction } from 'rxjs';
import * as z from 'zod';
import { tool, type CliMessage, type HostTool, type McpServers, type PermissionPolicy, type SessionCommand, type SessionMessage, type StopReport } from '../../lib/index.js';
import { describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import type { FakeModelServer, RequestLogEntry } from './fake-model-server.js';
import { callToolText, scenarioMarker } from './scenarios.js';
import { SessionDriver } from './session-driver.js';

/** What a run or session of the shared tool cases is given (the agent's other options are the test's). */
export interface ToolCaseOptions {
  readonly tools?: readonly HostTool[];
  readonly mcpServers?: McpServers;
  readonly permission?: PermissionPolicy;
}

/** One agent as the shared host-tool and MCP cases need it. */
export interface ToolAgent {
  readonly name: string;
  /** Carried by every process of the agent's runs and sessions. */
  readonly tag: ProcessTag;
  /** The fake model server the agent talks to. */
  readonly server: FakeModelServer;
  /** A run of the agent with this prompt and these tool options. */
  run(prompt: string, options: ToolCaseOptions): Observable<CliMessage>;
  /** A session of the agent with these tool options. */
  session(options: ToolCaseOptions, onStopped: (report: StopReport) => void): OperatorFunction<SessionCommand, SessionMessage>;
  /** Its session's `tool.call` says no input (Gemini CLI's ACP updates carry none: its input is `{ title }`). */
  readonly sessionCallsSayNoInput?: boolean;
  /**
   * How the agent checks a call's input against the tool's schema itself, before calling, if it
   * does: Qwen Code `coerces` it (17 given for a string arrives as '17'), Gemini CLI `refuses` it
   * (the model reads Gemini CLI's own error, `params/orderId must be string`).
   */
  readonly checksInput?: 'coerces' | 'refuses';
}

/** The MCP server on stdio the cases give through `mcpServers`. */
export const NOTES_SERVER = fileURLToPath(new URL('../fixtures/mcp/notes-server.mjs', import.meta.url));

/** The requests made since `from` (an index into the server's log), as JSON text. */
function bodiesSince(server: FakeModelServer, from: number): string[] {
  return server.requests
    .slice(from)
    .filter((request: RequestLogEntry) => request.method === 'POST')
    .map((request) => JSON.stringify(request.body));
}

/** `promise`, or a rejection naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(what()));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A host tool `wait_forever` whose `run` never settles: when it was called, and the signal it got. */
function pendingTool(): { readonly tool: HostTool; readonly started: Promise<void>; signal(): AbortSignal | undefined } {
  let seen: AbortSignal | undefined;
  let called!: () => void;
  const started = new Promise<void>((resolve) => {
    called = resolve;
  });
  const waitForever = tool({
    name: 'wait_forever',
    description: 'Never answers',
    input: z.object({}),
    run: (_input, { signal }) => {
      seen = signal;
      called();
      return new Promise(() => undefined);
    },
  });
  return { tool: waitForever, started, signal: () => seen };
}

/** A prompt of the `call_tool` scenario. */
const ask = (name: string, input: Record<string, unknown>): string => `${scenarioMarker('call_tool')}${callToolText(name, input)}`;

/** The tool messages of `messages` about the call of `name` (one call expected). */
function callOf(messages: readonly (CliMessage | SessionMessage)[], name: string) {
  const calls = messages.filter((message) => message.type === 'tool.call' && message.name === name);
  const ids = new Set(calls.map((call) => (call.type === 'tool.call' ? call.toolCallId : '')));
  const ends = messages.filter((message) => (message.type === 'tool.completed' || message.type === 'tool.failed') && ids.has(message.toolCallId));
  return { calls, ends };
}

/**
 * What every agent does with host tools (`tools`) and MCP servers (`mcpServers`), on its real CLI:
 * a call runs the tool once with its checked input, the model's next request carries the answer,
 * the stream shows the call and its end once, named `mcp__host__<name>`; an input that fails the
 * schema and a `run` that throws are tool errors the model reads; an abort while `run` is pending
 * fires its signal and ends the turn; a permission policy decides host tools as any other; a
 * stdio MCP server of `mcpServers` is started by the agent and called; unsubscribing while `run`
 * is pending fires its signal and leaves no process.
 */
export function toolConformance(agent: () => ToolAgent): void {
  const drivers: SessionDriver[] = [];

  afterEach(async () => {
    for (const driver of drivers.splice(0)) driver.unsubscribe();
    const left = await agent().tag.waitUntilNone(10_000);
    expect(describeProcesses(left)).toBe('none');
  });

  it('a session: a call runs the tool once with its checked input and the model reads the answer; a bad input, a throwing run, a denied tool and an abort while run is pending are handled', async () => {
    const { server } = agent();
    const lookups: unknown[] = [];
    let exploded = 0;
    let forbidden = 0;
    const pending = pendingTool();
    const lookupOrder = tool({
      name: 'lookup_order',
      description: 'Looks an order up by its id',
      input: z.object({ orderId: z.string() }),
      run: ({ orderId }) => {
        lookups.push({ orderId });
        return `order ${orderId}: shipped on Tuesday`;
      },
    });
    const explode = tool({
      name: 'explode',
      description: 'Always fails',
      input: z.object({}),
      run: () => {
        exploded += 1;
        throw new Error('boom-7734');
      },
    });
    const forbiddenTool = tool({
      name: 'forbidden',
      description: 'Denied by the policy',
      input: z.object({}),
      run: () => {
        forbidden += 1;
        return 'should not run';
      },
    });
    const asked: string[] = [];
    const permission: PermissionPolicy = (request) => {
      asked.push(request.tool);
      return request.tool.endsWith('forbidden') ? 'deny' : 'allow';
    };
    const driver = new SessionDriver((onStopped) => agent().session({ tools: [lookupOrder, explode, forbiddenTool, pending.tool], permission }, onStopped));
    drivers.push(driver);

    // A valid call: run once with the input, its answer in the model's next request.
    let from = server.requests.length;
    driver.send({ type: 'prompt', text: ask('lookup_order', { orderId: 'A-17' }) });
    expect(await driver.nextOf('turn.completed', 120_000)).toMatchObject({ turn: 1 });
    expect(lookups).toEqual([{ orderId: 'A-17' }]);
    expect(bodiesSince(server, from).some((body) => body.includes('order A-17: shipped on Tuesday'))).toBe(true);
    const first = callOf(driver.turn(1), 'mcp__host__lookup_order');
    expect(first.calls).toHaveLength(1);
    if (agent().sessionCallsSayNoInput !== true) expect(first.calls[0]).toMatchObject({ input: { orderId: 'A-17' } });
    expect(first.ends).toHaveLength(1);
    expect(first.ends[0]).toMatchObject({ type: 'tool.completed' });
    expect(first.ends[0]?.type === 'tool.completed' ? first.ends[0].output : '').toContain('order A-17: shipped on Tuesday');
    expect(asked).toContain('mcp__host__lookup_order');

    // An input that fails the schema: a tool error the model reads; run is not called. (An agent
    // that coerces the input to the schema first calls run with what it made: `{ orderId: '17' }`.)
    from = server.requests.length;
    driver.send({ type: 'prompt', text: ask('lookup_order', { orderId: 17 }) });
    expect(await driver.nextOf('turn.completed', 120_000)).toMatchObject({ turn: 2 });
    const checks = agent().checksInput;
    if (checks === 'coerces') {
      expect(lookups).toEqual([{ orderId: 'A-17' }, { orderId: '17' }]);
      lookups.splice(1);
    } else {
      expect(lookups).toHaveLength(1);
      const error = checks === 'refuses' ? 'orderId must be string' : 'Invalid input for lookup_order';
      expect(bodiesSince(server, from).some((body) => body.includes(error))).toBe(true);
    }
    expect(callOf(driver.turn(2), 'mcp__host__lookup_order').ends).toHaveLength(1);

    // A run that throws: a tool error with its message.
    from = server.requests.length;
    driver.send({ type: 'prompt', text: ask('explode', {}) });
    expect(await driver.nextOf('turn.completed', 120_000)).toMatchObject({ turn: 3 });
    expect(exploded).toBe(1);
    expect(bodiesSince(server, from).some((body) => body.includes('boom-7734'))).toBe(true);
    const failed = callOf(driver.turn(3), 'mcp__host__explode');
    expect(failed.calls).toHaveLength(1);
    expect(failed.ends).toHaveLength(1);

    // The policy denies a host tool as any other: its run is not called.
    driver.send({ type: 'prompt', text: ask('forbidden', {}) });
    expect(await driver.nextOf('turn.completed', 120_000)).toMatchObject({ turn: 4 });
    expect(forbidden).toBe(0);
    expect(driver.turn(4)).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'deny' }));

    // An abort while run is pending: its signal fires, the turn ends, the session goes on.
    driver.send({ type: 'prompt', text: ask('wait_forever', {}) });
    await within(pending.started, 120_000, () => `wait_forever was not called; got ${driver.turn(5).map((message) => message.type).join(', ')}`);
    driver.send({ type: 'abort' });
    expect(await driver.nextOf('turn.failed', 120_000)).toMatchObject({ turn: 5, reason: 'aborted' });
    expect(pending.signal()?.aborted).toBe(true);

    driver.end();
    expect(await driver.nextOf('terminal.completed', 60_000)).toMatchObject({ type: 'terminal.completed' });
  }, 300_000);

  it('a run: a stdio MCP server given through mcpServers is started by the agent and called once', async () => {
    const { server } = agent();
    const log = join(tmpdir(), `agent-rx-notes-${process.pid}-${Date.now()}.log`);
    try {
      const from = server.requests.length;
      const messages = await lastValueFrom(
        agent()
          .run(ask('note_lookup', { key: 'kiwi' }), {
            mcpServers: { notes: { command: process.execPath, args: [NOTES_SERVER], env: { NOTES_MCP_LOG: log }, trust: true } },
          })
          .pipe(toArray()),
      );
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
      expect(existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []).toHaveLength(1);
      expect(bodiesSince(server, from).some((body) => body.includes('the magic word is ZEPHYR-4'))).toBe(true);
      const call = callOf(messages, 'mcp__notes__note_lookup');
      expect(call.calls).toHaveLength(1);
      expect(call.ends).toHaveLength(1);
    } finally {
      rmSync(log, { force: true });
    }
  }, 180_000);

  it("a run: host tools without a permission are the caller's to use; unsubscribing while run is pending fires its signal and leaves no process", async () => {
    const pending = pendingTool();
    const messages: CliMessage[] = [];
    let called!: () => void;
    // The agent may say the call on stdout a moment after it made it.
    const said = new Promise<void>((resolve) => {
      called = resolve;
    });
    const subscription = agent()
      .run(ask('wait_forever', {}), { tools: [pending.tool] })
      .subscribe((message) => {
        messages.push(message);
        if (message.type === 'tool.call' && message.name === 'mcp__host__wait_forever') called();
      });
    const got = (): string => messages.map((message) => message.type).join(', ');
    try {
      await within(pending.started, 120_000, () => `wait_forever was not called; got ${got()}`);
      await within(said, 60_000, () => `the call was not in the stream; got ${got()}`);
    } finally {
      subscription.unsubscribe();
    }
    expect(pending.signal()?.aborted).toBe(true);
    expect(callOf(messages, 'mcp__host__wait_forever').calls).toHaveLength(1);
  }, 180_000);
}
