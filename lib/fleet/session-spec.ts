import * as z from 'zod';
import { AGENT_NAMES, AGENTS, type AgentName } from '../agent-table.js';
import { describeIssue } from '../agents/shared/option-schemas.js';
import type { RunSpecOptions } from './run-spec.js';
import type { TraceContext } from '../process/trace-context.js';

/** What a run spec has that a fleet session's does not: a session's prompts are its commands, its conversation is its id. */
const RUN_ONLY: readonly string[] = ['prompt', 'outputSchema', 'session', 'mcpServers', 'timeoutMs', 'ephemeral'];

/**
 * What a caller may choose of a fleet session of the agent `N`: the options of its run spec (see
 * {@link RunSpecOptions}: the model, tool lists, `cwd` as a request, …) without what a session
 * takes otherwise: the prompt (its commands), `session` (the session's id names its
 * conversation), `outputSchema` (a command's own), `timeoutMs`, and `mcpServers` and Codex's
 * `ephemeral` (not taken by fleet sessions yet).
 */
export type SessionSpecOptions<N extends AgentName> = Omit<RunSpecOptions<N>, 'prompt' | 'outputSchema' | 'session' | 'mcpServers' | 'timeoutMs' | 'ephemeral'>;

/** A fleet session of the agent `N` as data. */
export interface AgentSessionSpec<N extends AgentName> {
  /** The agent: a name of the agent table (`pi`, `claude`, …). */
  agent: N;
  /** What the caller chooses of its agent (see {@link SessionSpecOptions}). */
  options?: SessionSpecOptions<N>;
  /**
   * After this long without a turn, the activation saves the conversation, ends its agent and gives
   * its worker's slot back (`session.passivated`); the next command activates it again, on any
   * worker. Default 60000.
   */
  idleMs?: number;
  /** How its agent's permission requests are answered, decided on the worker. Default: the worker's setting for the agent, else the agent's own rules. */
  permission?: 'allow-all' | 'allow-reads' | 'deny-all';
}

/** A fleet session as data: one of {@link AgentSessionSpec} for each agent of the table. Plain JSON: it travels through Redis. */
export type SessionSpec = { [N in AgentName]: AgentSessionSpec<N> }[AgentName];

/** The default `idleMs` of a fleet session. */
export const FLEET_SESSION_IDLE_MS = 60_000;

function sessionOptionsSchema(name: AgentName): z.ZodType {
  const spec = AGENTS[name].options.spec as unknown as z.ZodObject;
  const kept = Object.fromEntries(Object.entries(spec.shape).filter(([key]) => !RUN_ONLY.includes(key)));
  return z.strictObject(kept);
}

/** The zod schema of a {@link SessionSpec}, strict at every level. */
export const SessionSpecSchema: z.ZodType<SessionSpec, SessionSpec> = z.discriminatedUnion(
  'agent',
  AGENT_NAMES.map((name) =>
    z.strictObject({
      agent: z.literal(name),
      options: sessionOptionsSchema(name).optional(),
      idleMs: z.number({ error: 'must be a number of ms' }).int({ error: 'must be an integer' }).positive({ error: 'must be > 0' }).optional(),
      permission: z.enum(['allow-all', 'allow-reads', 'deny-all'], { error: 'must be one of allow-all, allow-reads, deny-all' }).optional(),
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<SessionSpec, SessionSpec>;

/**
 * The spec, checked: a `TypeError` that says what is wrong.
 *
 * @example
 * checkSessionSpec({ agent: 'pi', options: { model: 'claude-sonnet-4-5' }, idleMs: 30_000 }); // a SessionSpec
 * checkSessionSpec({ agent: 'pi', options: { prompt: 'Hi' } });
 * // throws TypeError: agent-rx: not a session spec: options has no option "prompt"
 * checkSessionSpec({ agent: 'gemini' });
 * // throws TypeError: agent-rx: not a session spec: Gemini CLI sessions cannot resume a conversation in a new process, which a fleet session needs
 */
export function checkSessionSpec(value: unknown): SessionSpec {
  const parsed = SessionSpecSchema.safeParse(value, { reportInput: true });
  if (parsed.success) {
    // A fleet session sleeps and wakes in another process: its agent's definition must say how.
    const { displayName, conversation } = AGENTS[parsed.data.agent];
    if (conversation === undefined) throw new TypeError(`agent-rx: not a session spec: ${displayName} sessions cannot resume a conversation in a new process, which a fleet session needs`);
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  throw new TypeError(`agent-rx: not a session spec: ${describeIssue(issue, issue?.path.map(String).join('.') ?? 'it')}`);
}

/** Throws a `TypeError` unless `sessionId` can name a fleet session (its keys are made of it). */
export function checkSessionId(sessionId: string): void {
  if (typeof sessionId !== 'string' || !/^[\w.-]{1,200}$/.test(sessionId)) {
    throw new TypeError(`agent-rx: a session id is 1 to 200 letters, digits, and _ . -; got ${JSON.stringify(sessionId)}`);
  }
}

/** What an activation job carries. */
export interface ActivationData {
  readonly sessionId: string;
  readonly spec: SessionSpec;
  /** The trace context of the caller whose command woke the session: its agent process gets it (`TRACEPARENT`). */
  readonly traceContext?: TraceContext | undefined;
}

/** The job name of a session's activation on the fleet's queue. */
export const ACTIVATION_JOB = 'session';
