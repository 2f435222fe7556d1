import type { CliMessage } from '../../messages.js';
import type { AgentEvent } from '../../operators/items.js';
import { contentText } from '../../operators/prompt-parts.js';
import { NO_REACTION, type ProtocolFact, type ProtocolReaction, type SessionAsk, type SessionProtocol } from '../../operators/session-protocol.js';
import type { SessionInput } from '../../sessions/session-machine.js';
import { field, stringOf } from '../shared/events.js';
import { outcomeOf } from '../shared/turn-outcome.js';
import { piDialect, type PiState } from './dialect.js';
import { piPermissionAnswer, piPermissionQuestion } from './permission.js';

/** One turn as pi's protocol follows it. */
interface PiTurn {
  /** The id of the `prompt` command that started it. */
  readonly promptId: string;
  /** The turn's own reading of pi's events (stop reason, error, usage), by the one-shot dialect. */
  readonly reading: PiState;
  /** User inputs written to pi (the prompt, steers) whose user message pi has not echoed yet. */
  unechoed: number;
  /** Steers written and not yet answered, by command id. */
  readonly steers: Map<string, SessionInput>;
  /** pi started working on it (`agent_start`). */
  started: boolean;
  /** An `agent_end` came and no retry after it. */
  agentEnded: boolean;
  /** The id of the `get_state` that tells whether an errored `agent_end` is final (pi's auto-retry), while it is unanswered. */
  barrier: string | null;
  /** An abort was asked for; `held`: it waits until pi has started the turn. */
  abort: { held: boolean } | null;
}

/** The pi session protocol's state (`pi --mode rpc`), one per session subscription. */
export interface PiSessionState {
  nextId: number;
  sessionId: string | undefined;
  turn: PiTurn | null;
  /** Steers pi still holds from an aborted turn: it puts them into the next turn. */
  carried: number;
}

const STATE_REQUEST = 'agent-rx-state';
const dialect = piDialect();

/**
 * pi's `--mode rpc`, as a session protocol. The traps it handles, each seen in runs of the real CLI:
 * - rpc mode prints no session header: a `get_state` at start tells the session's id, and the
 *   session is announced with it before the first prompt is written;
 * - responses are not in command order: every command has an id, and replies are matched by it;
 * - a steer is a `prompt` with `streamingBehavior: "steer"`: pi takes it into the running turn, and
 *   when the turn just ended, starts a run with it (a plain `steer` would wait in pi's queue for the
 *   next prompt); the turn ends only once pi has echoed every input sent to it;
 * - after an `agent_end` whose last message is an error, pi may still retry (auto-retry): a
 *   `get_state` barrier decides (a retry is announced before its reply);
 * - an abort sent before pi started the turn is held until it has;
 * - stdin is never closed mid-turn (that kills the turn silently and orphans a running tool): the
 *   machine ends the input only between turns;
 * - pi never asks before a tool call: with `permission`, agent-rx's extension does (a `confirm`
 *   dialog per call, `extension_ui_request`), and the answer is the dialog's response.
 * pi keeps a steer that is still queued when a turn is aborted (its RPC cannot clear the queue)
 * and puts it into the next turn: the aborted turn says so with an `agent.warning`.
 *
 * @example
 * // pi's RPC mode continuing the latest session of this folder.
 * commands
 *   .pipe(
 *     processSession({
 *       command: 'pi',
 *       args: ['--mode', 'rpc', '--continue'],
 *       processOptions: { interrupt: { signal: 'SIGTERM' } },
 *       dialect: piDialect({ resuming: true }),
 *       protocol: piSessionProtocol({ resuming: true }),
 *     }),
 *   )
 *   .subscribe(render);
 */
export function piSessionProtocol(options: { readonly resuming?: boolean } = {}): SessionProtocol<PiSessionState> {
  const resuming = options.resuming === true;
  return {
    name: 'pi',
    // Images go as bytes in the command's `images`; files are read by agent-rx and go as text.
    prompts: { image: true, file: true },
    createState: () => ({ nextId: 0, sessionId: undefined, turn: null, carried: 0 }),
    // pi answers `get_state` as soon as it reads commands, with the session's id: the session is
    // announced then, before the first prompt is written.
    announcesSession: () => true,
    open: () => [{ type: 'write', line: { id: STATE_REQUEST, type: 'get_state' } }],
    act,
    read: (state, event) => read(state, event, resuming),
  };
}

function act(state: PiSessionState, ask: SessionAsk): ProtocolReaction {
  switch (ask.type) {
    case 'start': {
      const promptId = nextId(state, 'prompt');
      state.turn = {
        promptId,
        reading: dialect.createState(),
        unechoed: 1 + state.carried,
        steers: new Map(),
        started: false,
        agentEnded: false,
        barrier: null,
        abort: null,
      };
      state.carried = 0;
      return { outputs: [{ type: 'write', line: { id: promptId, type: 'prompt', ...promptFields(ask.input) } }] };
    }
    case 'steer': {
      const turn = state.turn;
      if (turn === null) return NO_REACTION;
      const id = nextId(state, 'steer');
      turn.unechoed += 1;
      turn.steers.set(id, ask.input);
      return { outputs: [{ type: 'write', line: { id, type: 'prompt', ...promptFields(ask.input), streamingBehavior: 'steer' } }] };
    }
    case 'abort': {
      const turn = state.turn;
      if (turn === null) return NO_REACTION;
      turn.abort = { held: !turn.started };
      return turn.started ? { outputs: [abortLine(state)] } : NO_REACTION;
    }
    case 'end':
      return { outputs: [{ type: 'endInput' }] };
  }
}

/** An image as pi's RPC takes it (pi-ai's `ImageContent`). */
interface PiImage {
  readonly type: 'image';
  /** Base64. */
  readonly data: string;
  readonly mimeType: string;
}

/**
 * What a `prompt` command says for an input: `message`, its text with each file as a `<file>`
 * block (pi's RPC has no file reference), and `images`, its images' bytes in order. pi does not
 * resize or check them; a model that pi's `models.json` does not declare with `input: ["text",
 * "image"]` gets a note instead of each image, from pi itself.
 */
function promptFields(input: Pick<SessionInput, 'text' | 'content'>): { readonly message: string; readonly images?: readonly PiImage[] } {
  const content = input.content;
  if (content === undefined) return { message: input.text };
  const images: PiImage[] = [];
  for (const part of content) if (part.type === 'image') images.push({ type: 'image', data: part.data, mimeType: part.mimeType });
  const message = contentText(content.filter((part) => part.type !== 'image'));
  return images.length === 0 ? { message } : { message, images };
}

function read(state: PiSessionState, event: AgentEvent, resuming: boolean): ProtocolReaction {
  if (event.type === 'response') return onResponse(state, event, resuming);
  if (event.type === 'extension_ui_request') return onQuestion(event);
  const turn = state.turn;
  if (turn === null) return NO_REACTION;
  dialect.map(turn.reading, event);
  switch (event.type) {
    case 'agent_start': {
      turn.started = true;
      turn.agentEnded = false;
      if (turn.abort?.held !== true) return NO_REACTION;
      turn.abort.held = false;
      return { outputs: [abortLine(state)] };
    }
    case 'message_end':
      if (field(field(event, 'message'), 'role') === 'user') turn.unechoed = Math.max(0, turn.unechoed - 1);
      return NO_REACTION;
    case 'auto_retry_start':
      turn.agentEnded = false;
      return NO_REACTION;
    case 'agent_end': {
      turn.agentEnded = true;
      if (turn.reading.lastStopReason === 'error' && turn.abort === null) {
        // Final only if no retry is announced before the reply to this.
        turn.barrier = nextId(state, 'barrier');
        return { outputs: [{ type: 'write', line: { id: turn.barrier, type: 'get_state' } }] };
      }
      return settle(state);
    }
    default:
      return NO_REACTION;
  }
}

function onResponse(state: PiSessionState, event: AgentEvent, resuming: boolean): ProtocolReaction {
  const id = stringOf(event['id']);
  const turn = state.turn;
  if (id === STATE_REQUEST) {
    const sessionId = stringOf(field(event['data'], 'sessionId'));
    if (sessionId === undefined || state.sessionId !== undefined) return { facts: [{ type: 'opened' }] };
    state.sessionId = sessionId;
    return { facts: [{ type: 'content', message: { type: resuming ? 'session.resumed' : 'session.started', sessionId } }, { type: 'opened' }] };
  }
  if (turn === null || id === undefined) return NO_REACTION;
  const failed = event['success'] === false;
  const error = stringOf(event['error']) ?? 'pi refused the command';
  if (id === turn.barrier) {
    turn.barrier = null;
    return turn.agentEnded ? settle(state) : NO_REACTION;
  }
  if (id === turn.promptId && failed && !turn.started) {
    // pi refused the prompt (no model, no API key, …): the turn ends before it began.
    state.turn = null;
    return { facts: [{ type: 'turnEnded', outcome: { kind: 'failed', reason: 'agent-error', message: `pi refused the prompt: ${error}`, agentError: error } }] };
  }
  const steer = turn.steers.get(id);
  if (steer !== undefined) {
    turn.steers.delete(id);
    if (!failed) return NO_REACTION;
    turn.unechoed = Math.max(0, turn.unechoed - 1);
    const rejected: ProtocolFact = { type: 'inputRejected', input: steer, message: `pi refused the steer: ${error}` };
    return { facts: [rejected, ...(settle(state).facts ?? [])] };
  }
  return NO_REACTION;
}

/**
 * A dialog of pi's extensions: the question of agent-rx's permission extension (loaded with
 * `permission`) is a permission request, answered by the dialog's response. Other dialogs are
 * not the session's to answer.
 */
function onQuestion(event: AgentEvent): ProtocolReaction {
  const question = piPermissionQuestion(event);
  if (question === undefined) return NO_REACTION;
  const { id, request } = question;
  return { facts: [{ type: 'permission', request, answer: (decision) => ({ outputs: [{ type: 'write', line: piPermissionAnswer(id, decision) }] }) }] };
}

/** Ends the turn when pi is done with it: its run ended, no barrier is open, every input echoed (or it was aborted). */
function settle(state: PiSessionState): ProtocolReaction {
  const turn = state.turn;
  if (turn === null || !turn.agentEnded || turn.barrier !== null) return NO_REACTION;
  if (turn.unechoed > 0 && turn.abort === null) return NO_REACTION;
  state.turn = null;
  const facts: ProtocolFact[] = [];
  if (turn.unechoed > 0) {
    // Steers pi took but had not delivered when the turn was aborted: pi keeps them for the next turn.
    state.carried = turn.unechoed;
    const one = turn.unechoed === 1;
    const warning: CliMessage = {
      type: 'agent.warning',
      message: `pi keeps ${one ? 'a steer' : `${String(turn.unechoed)} steers`} that the aborted turn had not reached, and delivers ${one ? 'it' : 'them'} with the next prompt`,
    };
    facts.push({ type: 'content', message: warning });
  }
  facts.push({ type: 'turnEnded', outcome: outcomeOf(dialect, turn.reading, 'pi') });
  return { facts };
}

function abortLine(state: PiSessionState): { readonly type: 'write'; readonly line: unknown } {
  return { type: 'write', line: { id: nextId(state, 'abort'), type: 'abort' } };
}

function nextId(state: PiSessionState, what: string): string {
  state.nextId += 1;
  return `agent-rx-${what}-${String(state.nextId)}`;
}
