import { createRequire } from 'node:module';
import type { AgentEvent } from '../../../operators/items.js';
import type { ProcessExit } from '../../../process/items.js';
import { NO_REACTION, type ProtocolFact, type ProtocolOutput, type ProtocolReaction, type SessionAsk, type SessionProtocol } from '../../../operators/session-protocol.js';
import type { SessionInput } from '../../../sessions/session-machine.js';
import { field, stringOf } from '../../shared/events.js';
import { sessionHeader } from '../../shared/session.js';
import { outcomeOf } from '../../shared/turn-outcome.js';
import { codexApproval } from './approvals.js';
import { codexAppServerDialect, type AppServerState } from './dialect.js';
import { APP_SERVER_REQUESTS } from './events.js';
import { fileBlock, type PromptContent } from '../../../operators/prompt-parts.js';
import { outputInstruction } from '../../../operators/output-schema.js';

/** One agent-rx turn as the app-server protocol follows it: one Codex turn, or more when a steer came too late. */
interface CodexTurn {
  readonly reading: AppServerState;
  /** The Codex turn now running, once `turn/start` answered (or `turn/started` said). */
  codexTurn: string | null;
  /** The id of the `turn/start` request not answered yet. */
  starting: string | null;
  /** Inputs to send as steers once the Codex turn id is known. */
  readonly held: SessionInput[];
  /** `turn/steer` requests not answered yet, by request id. */
  readonly steering: Map<string, SessionInput>;
  /** `turn/completed` came for the Codex turn. */
  completed: boolean;
  abort: { interruptSent: boolean; killing: boolean } | null;
}

/** The Codex app-server session protocol's state, one per session subscription. */
export interface AppServerSessionState {
  nextId: number;
  threadId: string | null;
  /** Asks held until the thread exists. */
  readonly pending: SessionAsk[];
  turn: CodexTurn | null;
  /** Codex could not open the thread: the session cannot go on. */
  fatal: string | undefined;
  /** The changes of each file change Codex started and has not completed, by item id: its approval request says none. */
  readonly fileChanges: Map<string, unknown>;
  /** Codex's version, from the `userAgent` of its answer to `initialize`. */
  version: string | undefined;
}

/** Options of {@link codexAppServerProtocol}: the thread the session starts or resumes. */
export interface AppServerSessionOptions {
  /**
   * `thread/start`'s parameters (`cwd`, `ephemeral`, …), or the thread to resume, with the
   * settings `thread/resume` changes (`model`, `sandbox`, `approvalPolicy`, …).
   */
  readonly thread: { readonly start: Readonly<Record<string, unknown>> } | { readonly resume: string; readonly settings?: Readonly<Record<string, unknown>> };
}

const dialect = codexAppServerDialect();
const THREAD_REQUEST = 'agent-rx-thread';
const INITIALIZE = 'agent-rx-init';
const VERSION = (createRequire(import.meta.url)('../../../../package.json') as { version: string }).version;

/**
 * `codex app-server` as a session protocol: JSON-RPC requests on stdin, one thread per session.
 * - the handshake (`initialize`, `initialized`) and `thread/start` (or `thread/resume`) go out at
 *   once; turns wait for the thread id, which is announced with Codex's version (from the
 *   `userAgent` of its answer to `initialize`);
 * - a prompt is `turn/start`, its input the prompt's parts in order (see `turnInput`): text,
 *   each file as a text item (a `<file>` block: Codex drops its own `mention` items), each image as
 *   an inline data URL; a turn's `outputSchema` is `turn/start`'s `outputSchema` (Codex gives it to
 *   the model as a strict `json_schema` format; the session checks the answer);
 * - a steer is `turn/steer` with the running Codex turn's id (held until `turn/start` answered it);
 *   when Codex answers "no active turn" (the turn ended as it was sent), the steer is sent as a
 *   `turn/start`, inside the same agent-rx turn. `turn/steer` takes no schema: a steer's goes in
 *   its text, as for an agent without native schemas;
 * - an abort is `turn/interrupt`. Codex then leaves the turn's command running (`sleep 30` lives on
 *   until it ends by itself): once the turn is interrupted, the session kills the agent's other
 *   processes (Codex keeps no helper process alive) and ends the turn when they are gone;
 * - approval requests of the server (a command, a file change, more sandbox permissions) are
 *   asked through the session's permission channel (see `codexApproval`) and answered with the
 *   decision; its other requests (questions to the user, elicitations, calls of client tools) are
 *   declined, and say so with an `agent.warning`.
 *
 * @example
 * // A session that resumes a Codex thread (its id from an earlier session.started).
 * commands
 *   .pipe(
 *     processSession({
 *       command: 'codex',
 *       args: ['app-server'],
 *       processOptions: {},
 *       dialect: codexAppServerDialect(),
 *       protocol: codexAppServerProtocol({ thread: { resume: 'thread-id' } }),
 *     }),
 *   )
 *   .subscribe(render);
 */
export function codexAppServerProtocol(options: AppServerSessionOptions): SessionProtocol<AppServerSessionState> {
  const resuming = 'resume' in options.thread;
  return {
    name: 'Codex',
    prompts: { image: true, file: true, nativeOutput: true },
    createState: () => ({ nextId: 0, threadId: null, pending: [], turn: null, fatal: undefined, fileChanges: new Map(), version: undefined }),
    // The thread's id comes in the answer to `thread/start` (`thread/resume`), before any turn.
    announcesSession: () => true,
    open: () => [
      write({ id: INITIALIZE, method: 'initialize', params: { clientInfo: { name: 'agent-rx', title: 'agent-rx', version: VERSION } } }),
      write({ method: 'initialized' }),
      'resume' in options.thread
        ? write({ id: THREAD_REQUEST, method: 'thread/resume', params: { ...options.thread.settings, threadId: options.thread.resume, excludeTurns: true } })
        : write({ id: THREAD_REQUEST, method: 'thread/start', params: options.thread.start }),
    ],
    act,
    read: (state, event) => read(state, event, resuming),
    cleanExit: (state: AppServerSessionState, exit: ProcessExit) => exit.exitCode === 0 && state.fatal === undefined,
  };
}

function write(line: unknown): ProtocolOutput {
  return { type: 'write', line };
}

function request(state: AppServerSessionState, method: string, params: unknown): { readonly id: string; readonly output: ProtocolOutput } {
  state.nextId += 1;
  const id = `agent-rx-${String(state.nextId)}`;
  return { id, output: write({ id, method, params }) };
}

/** One item of Codex's `UserInput`, as agent-rx sends them. */
export type CodexUserInput = { readonly type: 'text'; readonly text: string; readonly text_elements: readonly [] } | { readonly type: 'image'; readonly url: string };

/**
 * A prompt as `turn/start` and `turn/steer` take it: its parts in order; text as text items (empty
 * ones left out), a file as a text item holding a `<file path="…">` block (Codex has no file input:
 * its `mention` items are dropped), an image as `{ type: 'image', url: 'data:<type>;base64,…' }`,
 * the bytes agent-rx read and checked when the command came (a `localImage` would have Codex read
 * the file again when the turn starts; Codex still re-encodes a GIF as PNG). `instruction`: text
 * to add last (a steer's schema).
 */
export function turnInput(input: { readonly text: string; readonly content?: PromptContent }, instruction?: string): CodexUserInput[] {
  const content: PromptContent = input.content ?? [{ type: 'text', text: input.text }];
  const items = content.flatMap((part): CodexUserInput[] => {
    switch (part.type) {
      case 'text':
        return part.text === '' ? [] : [textItem(part.text)];
      case 'file':
        return [textItem(fileBlock(part.path, part.text))];
      case 'image':
        return [{ type: 'image', url: `data:${part.mimeType};base64,${part.data}` }];
    }
  });
  return instruction === undefined ? items : [...items, textItem(instruction)];
}

const textItem = (text: string): CodexUserInput => ({ type: 'text', text, text_elements: [] });

function act(state: AppServerSessionState, ask: SessionAsk): ProtocolReaction {
  if (ask.type === 'end') return { outputs: [{ type: 'endInput' }] };
  if (ask.type === 'start') {
    state.turn = { reading: dialect.createState(), codexTurn: null, starting: null, held: [], steering: new Map(), completed: false, abort: null };
    if (state.fatal !== undefined) return endFatal(state);
  }
  if (state.threadId === null) {
    state.pending.push(ask);
    return NO_REACTION;
  }
  return perform(state, ask);
}

function perform(state: AppServerSessionState, ask: SessionAsk): ProtocolReaction {
  const turn = state.turn;
  const threadId = state.threadId;
  if (turn === null || threadId === null) return NO_REACTION;
  switch (ask.type) {
    case 'start':
      return { outputs: [startTurn(state, turn, threadId, ask.input)] };
    case 'steer':
      if (turn.codexTurn === null || turn.completed) {
        turn.held.push(ask.input);
        return NO_REACTION;
      }
      return { outputs: [steer(state, turn, threadId, turn.codexTurn, ask.input)] };
    case 'abort':
      turn.abort = { interruptSent: false, killing: false };
      return interrupt(state, turn);
    case 'end':
      return NO_REACTION;
  }
}

function startTurn(state: AppServerSessionState, turn: CodexTurn, threadId: string, input: SessionInput): ProtocolOutput {
  const params = { threadId, input: turnInput(input), ...(input.output === undefined ? {} : { outputSchema: input.output.jsonSchema }) };
  const { id, output } = request(state, 'turn/start', params);
  turn.starting = id;
  turn.codexTurn = null;
  turn.completed = false;
  return output;
}

function steer(state: AppServerSessionState, turn: CodexTurn, threadId: string, codexTurn: string, input: SessionInput): ProtocolOutput {
  // `turn/steer` takes no schema: the steer says it in its text.
  const instruction = input.output === undefined ? undefined : outputInstruction(input.output);
  const { id, output } = request(state, 'turn/steer', { threadId, expectedTurnId: codexTurn, input: turnInput(input, instruction) });
  turn.steering.set(id, input);
  return output;
}

/** Interrupts the Codex turn once its id is known (now, or when `turn/start` answers). */
function interrupt(state: AppServerSessionState, turn: CodexTurn): ProtocolReaction {
  const abort = turn.abort;
  if (abort === null || abort.interruptSent || turn.codexTurn === null || state.threadId === null) return NO_REACTION;
  abort.interruptSent = true;
  if (turn.completed) return killTools(turn);
  return { outputs: [request(state, 'turn/interrupt', { threadId: state.threadId, turnId: turn.codexTurn }).output] };
}

function killTools(turn: CodexTurn): ProtocolReaction {
  if (turn.abort === null || turn.abort.killing) return NO_REACTION;
  turn.abort.killing = true;
  return { outputs: [{ type: 'killTools' }] };
}

function read(state: AppServerSessionState, event: AgentEvent, resuming: boolean): ProtocolReaction {
  switch (event.type) {
    case 'response':
      return onResponse(state, event, resuming);
    case 'server-request':
      return serverRequest(state, event);
    case 'agent-rx.tools-killed': {
      const turn = state.turn;
      return turn?.abort?.killing === true ? end(state) : NO_REACTION;
    }
    default:
      break;
  }
  remember(state, event);
  const turn = state.turn;
  if (turn === null) return NO_REACTION;
  dialect.map(turn.reading, event);
  if (event.type === 'turn/started' && turn.codexTurn === null && turn.starting !== null) {
    return onCodexTurn(state, turn, stringOf(field(field(event['params'], 'turn'), 'id')));
  }
  if (event.type === 'turn/completed') {
    const id = stringOf(field(field(event['params'], 'turn'), 'id'));
    if (id === undefined || id !== turn.codexTurn) return NO_REACTION;
    turn.completed = true;
    if (turn.abort !== null) return killTools(turn);
    return settle(state, turn);
  }
  return NO_REACTION;
}

function onResponse(state: AppServerSessionState, event: AgentEvent, resuming: boolean): ProtocolReaction {
  const id = event['id'];
  const error = stringOf(field(event['error'], 'message'));
  if (id === INITIALIZE) {
    state.version = codexVersion(field(event['result'], 'userAgent'));
    return NO_REACTION;
  }
  if (id === THREAD_REQUEST) {
    const threadId = stringOf(field(field(event['result'], 'thread'), 'id'));
    if (error !== undefined || threadId === undefined) {
      state.fatal = `Codex could not ${resuming ? 'resume' : 'start'} the thread: ${error ?? 'no thread id'}`;
      // The session will not open: its first prompt's turn fails with this.
      const fatal = endFatal(state);
      return { ...fatal, facts: [...(fatal.facts ?? []), { type: 'opened' }] };
    }
    state.threadId = threadId;
    const facts: ProtocolFact[] = [{ type: 'content', message: sessionHeader(resuming, threadId, { agentVersion: state.version }) }, { type: 'opened' }];
    const reactions = state.pending.splice(0).map((ask) => perform(state, ask));
    return { facts: [...facts, ...reactions.flatMap((reaction) => reaction.facts ?? [])], outputs: reactions.flatMap((reaction) => reaction.outputs ?? []) };
  }
  const turn = state.turn;
  if (turn === null || typeof id !== 'string') return NO_REACTION;
  if (id === turn.starting) {
    turn.starting = null;
    if (error !== undefined) {
      state.turn = null;
      return { facts: [{ type: 'turnEnded', outcome: { kind: 'failed', reason: 'agent-error', message: `Codex refused the turn: ${error}`, agentError: error } }] };
    }
    return onCodexTurn(state, turn, stringOf(field(field(event['result'], 'turn'), 'id')));
  }
  const steered = turn.steering.get(id);
  if (steered === undefined) return NO_REACTION;
  turn.steering.delete(id);
  if (error === undefined) return NO_REACTION;
  if (/no active turn/i.test(error) && state.threadId !== null && turn.abort === null) {
    // The Codex turn ended as the steer went out: the steer starts the next one, in the same agent-rx turn.
    return { outputs: [startTurn(state, turn, state.threadId, steered)] };
  }
  return { facts: [{ type: 'inputRejected', input: steered, message: `Codex refused the steer: ${error}` }, ...(settle(state, turn).facts ?? [])] };
}

/**
 * Codex's version in the `userAgent` it answers `initialize` with: `<client name>/<Codex's
 * version> (<OS>; <arch>) <terminal> (<client name>; <client version>)`, e.g.
 * `agent-rx/0.171.0 (Debian 12.0.0; x86_64) unknown (agent-rx; 0.1.0)`.
 *
 * @example
 * codexVersion('agent-rx/0.171.0 (Debian 12.0.0; x86_64) unknown (agent-rx; 0.1.0)'); // '0.171.0'
 */
export function codexVersion(userAgent: unknown): string | undefined {
  return typeof userAgent === 'string' ? /^[^\s/]+\/(\d[^\s]*)/.exec(userAgent)?.[1] : undefined;
}

/** The Codex turn is known: send the steers and the abort that waited for it. */
function onCodexTurn(state: AppServerSessionState, turn: CodexTurn, codexTurn: string | undefined): ProtocolReaction {
  if (codexTurn === undefined || state.threadId === null) return NO_REACTION;
  turn.codexTurn = codexTurn;
  const threadId = state.threadId;
  const outputs = turn.held.splice(0).map((input) => steer(state, turn, threadId, codexTurn, input));
  const aborting = interrupt(state, turn);
  return { outputs: [...outputs, ...(aborting.outputs ?? [])] };
}

/** Ends the turn once Codex completed it and no steer or start is unanswered; held steers start the next Codex turn. */
function settle(state: AppServerSessionState, turn: CodexTurn): ProtocolReaction {
  if (!turn.completed || turn.steering.size > 0 || turn.starting !== null) return NO_REACTION;
  const held = turn.held.shift();
  if (held !== undefined && state.threadId !== null) {
    const outputs = [startTurn(state, turn, state.threadId, held)];
    return { outputs };
  }
  return end(state);
}

function end(state: AppServerSessionState): ProtocolReaction {
  const turn = state.turn;
  if (turn === null) return NO_REACTION;
  state.turn = null;
  state.fileChanges.clear();
  return { facts: [{ type: 'turnEnded', outcome: outcomeOf(dialect, turn.reading, 'Codex') }] };
}

function endFatal(state: AppServerSessionState): ProtocolReaction {
  const message = state.fatal ?? 'Codex cannot go on';
  const facts: ProtocolFact[] = state.turn === null ? [] : [{ type: 'turnEnded', outcome: { kind: 'failed', reason: 'agent-error', message } }];
  state.turn = null;
  return { facts, outputs: [{ type: 'endInput' }] };
}

/** Remembers the changes of a file change from its `item/started`: its approval request names only the item. */
function remember(state: AppServerSessionState, event: AgentEvent): void {
  if (event.type !== 'item/started' && event.type !== 'item/completed') return;
  const item = field(event['params'], 'item');
  const id = stringOf(field(item, 'id'));
  if (id === undefined || field(item, 'type') !== 'fileChange') return;
  if (event.type === 'item/started') state.fileChanges.set(id, field(item, 'changes'));
  else state.fileChanges.delete(id);
}

/** A request of the server: an approval is asked through the permission channel, answered with the decision; the others are declined. */
function serverRequest(state: AppServerSessionState, event: AgentEvent): ProtocolReaction {
  const approval = codexApproval(stringOf(event['method']) ?? 'unknown', event['params'], state.fileChanges);
  if (approval === undefined) return decline(event);
  const id = event['id'];
  return { facts: [{ type: 'permission', request: approval.request, answer: (decision) => ({ outputs: [write({ id, result: approval.result(decision) })] }) }] };
}

/** The answer that declines a request of the server, by method; an unknown method gets an error. */
const DECLINES: Readonly<Record<string, unknown>> = {
  'item/tool/requestUserInput': { answers: {} },
  'mcpServer/elicitation/request': { action: 'decline', content: null, _meta: null },
  'item/tool/call': { contentItems: [], success: false },
};

function decline(event: AgentEvent): ProtocolReaction {
  const method = stringOf(event['method']) ?? 'unknown';
  const result = DECLINES[method];
  const answer = result === undefined ? { id: event['id'], error: { code: -32601, message: `agent-rx does not answer ${method}` } } : { id: event['id'], result };
  // A method agent-rx does not know is said once per session, as every unknown type is (the dialect's `unknownType`).
  if (!APP_SERVER_REQUESTS.includes(method)) return { outputs: [write(answer)] };
  const what = stringOf(field(event['params'], 'command'));
  return {
    outputs: [write(answer)],
    facts: [{ type: 'content', message: { type: 'agent.warning', message: `declined Codex's ${method} request${what === undefined ? '' : ` (${what})`}: a session answers only approval requests` } }],
  };
}
