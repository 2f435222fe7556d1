import { randomUUID } from 'node:crypto';
import type { CliMessage, Usage } from '../../messages.js';
import type { AgentEvent } from '../../operators/items.js';
import { contentText as promptText } from '../../operators/prompt-parts.js';
import type { ProcessExit } from '../../process/items.js';
import { NO_REACTION, type ProtocolFact, type ProtocolReaction, type SessionAsk, type SessionProtocol } from '../../operators/session-protocol.js';
import type { SessionInput, TurnOutcome } from '../../sessions/session-machine.js';
import { field, narrowEvents, numberOf, stringOf } from '../shared/events.js';
import { sessionHeader } from '../shared/session.js';
import { outcomeOf } from '../shared/turn-outcome.js';
import { addUsage } from '../../operators/add-usage.js';
import { claudeDialect, claudeUsage, type ClaudeState } from './dialect.js';
import type { ClaudeEvent } from './events.js';
import { claudeControlRequest } from './permission.js';

const known = narrowEvents<ClaudeEvent>();

/** One agent-rx turn as Claude Code's protocol follows it: it may span several of the CLI's `result`s. */
interface ClaudeTurn {
  /** The turn's reading of the CLI's lines (its last `result`), by the one-shot dialect. */
  readonly reading: ClaudeState;
  /** User lines written (the prompt, steers) whose replay has not come yet, by uuid. */
  readonly unreplayed: Set<string>;
  /** Steers written, by uuid. */
  readonly steers: Map<string, SessionInput>;
  /** User lines written with images whose replay has not come yet, by uuid: the replay says which the CLI could not take. */
  readonly withImages: Set<string>;
  /** `result` lines of this turn so far. */
  results: number;
  /** The CLI took a line (its replay came) and has not given that CLI turn's `result` yet. */
  running: boolean;
  /** The turn's usage: the sum of its results'. */
  usage: Usage | undefined;
  abort: {
    readonly interrupt: string;
    /** `cancel_async_message` requests not answered yet: request id → uuid. */
    readonly cancels: Map<string, string>;
    interruptAnswered: boolean;
    /** The tools of the turn are being killed: the turn ends once they are gone. */
    killing: boolean;
  } | null;
}

/** The Claude Code session protocol's state, one per session subscription. */
export interface ClaudeSessionState {
  /**
   * The id announced once the CLI answers `initialize`: the one a new session is given
   * (`--session-id`), or the one it resumes (`--resume`); undefined with `--continue`.
   */
  readonly sessionId: string | undefined;
  /** The session is resumed: it is announced as `session.resumed`. */
  readonly resumed: boolean;
  nextRequest: number;
  turn: ClaudeTurn | null;
  /** `total_cost_usd` of the last result: the session's cost so far. */
  costSoFar: number;
  /** The last `result` was an error: the CLI then exits 1 at the end of its input. */
  lastResultFailed: boolean;
  /** The CLI's version, as it answered `get_binary_version` (asked just before `initialize`). */
  version: string | undefined;
}

const dialect = claudeDialect();
const INITIALIZE = 'agent-rx-initialize';
const VERSION_REQUEST = 'agent-rx-version';

/**
 * Claude Code's duplex stream-json mode (`--input-format stream-json --replay-user-messages`),
 * as a session protocol. The traps it handles, each seen in runs of the real CLI:
 * - a turn can span several `result` lines (a line sent while the answer streams becomes a turn of
 *   the CLI's own after it): every user line has a uuid, and the turn ends at the first `result`
 *   after which each line written has been replayed;
 * - `terminal_reason` starting with `aborted` is an aborted turn, even with `subtype: "success"`;
 * - queued user lines survive an interrupt and would start the next turn: an abort first cancels
 *   every line not replayed yet (`cancel_async_message`), then interrupts; the CLI reports the
 *   interrupted turn before its tool is gone, so the turn ends once the processes it started are;
 * - closing stdin lets a running turn go on (a hung one for good): the input is closed only
 *   between turns; at that end the CLI exits 1 when its last result was an error.
 * A prompt's images go as base64 image blocks of its user line, its files as text blocks; the CLI
 * puts a text in the place of an image it cannot take, which its replay shows (an `agent.warning`).
 * `total_cost_usd` is the session's so far: a turn's cost is the difference. A new session gets its
 * id from agent-rx (`--session-id`), and is announced as soon as the CLI answers `initialize`, with
 * its version from `get_binary_version`, asked just before (its `system/init` line says it only
 * once a turn runs); so is one resumed by id (`resume`: the CLI exits before it answers when it has
 * no such session).
 * With `--continue` the id is the CLI's to tell, in its first turn's `system/init` line.
 * A `can_use_tool` control request (the CLI started with `--permission-prompt-tool stdio`) is the
 * session's permission request, answered by a `control_response` once the session decides; any
 * other control request of the CLI is answered with an error at once. The CLI echoes each answer
 * on stdout, which is ignored.
 *
 * @example
 * // What claudeCodeSession does, by hand: Claude Code's duplex stream-json mode.
 * commands
 *   .pipe(
 *     processSession({
 *       command: 'claude',
 *       args: ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--replay-user-messages'],
 *       processOptions: {},
 *       dialect: claudeDialect(),
 *       protocol: claudeSessionProtocol({ newSession: true }),
 *     }),
 *   )
 *   .subscribe(render);
 */
export function claudeSessionProtocol(options: { readonly newSession?: boolean; readonly resume?: string } = {}): SessionProtocol<ClaudeSessionState> {
  const newSession = options.newSession !== false;
  const resume = newSession ? undefined : options.resume;
  return {
    name: 'Claude Code',
    // Images go as base64 image blocks of the user line, files as text; a turn's schema is told in
    // the prompt (Claude Code's own, --json-schema, is one for the whole process).
    prompts: { image: true, file: true },
    createState: () => ({
      sessionId: newSession ? randomUUID() : resume,
      resumed: !newSession,
      nextRequest: 0,
      turn: null,
      costSoFar: 0,
      lastResultFailed: false,
      version: undefined,
    }),
    args: (state) => (state.sessionId === undefined || state.resumed ? [] : ['--session-id', state.sessionId]),
    // The CLI answers `initialize` once it is up: a session whose id is known is announced then,
    // before any prompt is written.
    announcesSession: (state) => state.sessionId !== undefined,
    open: (state) =>
      state.sessionId === undefined
        ? []
        : [
            // The CLI answers in order: its version is known when `initialize` is answered (a CLI that
            // does not know the request answers it with an error, or not at all: nothing waits for it).
            { type: 'write', line: { type: 'control_request', request_id: VERSION_REQUEST, request: { subtype: 'get_binary_version' } } },
            { type: 'write', line: { type: 'control_request', request_id: INITIALIZE, request: { subtype: 'initialize' } } },
          ],
    act,
    read,
    cleanExit: (state: ClaudeSessionState, exit: ProcessExit) => exit.exitCode === 0 || (exit.exitCode === 1 && state.lastResultFailed),
  };
}

function userLine(turn: ClaudeTurn, input: SessionInput, uuid: string): unknown {
  const content = claudeUserContent(input);
  if (content.some((block) => block.type === 'image')) turn.withImages.add(uuid);
  return { type: 'user', session_id: '', message: { role: 'user', content }, parent_tool_use_id: null, uuid };
}

/** A content block of a user line, as the Messages API takes it. */
export type ClaudeUserBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly source: { readonly type: 'base64'; readonly media_type: string; readonly data: string } };

/**
 * The content of the user line for a prompt or a steer, in the prompt's order: its text parts as
 * text blocks, its images as base64 image blocks, its files as text blocks holding a `<file>` block
 * each (the schema's instruction, for a turn with one, is its last text). Empty texts are left out
 * (the API refuses an empty text block).
 */
export function claudeUserContent(input: SessionInput): ClaudeUserBlock[] {
  const parts = input.content ?? [{ type: 'text', text: input.text }];
  const blocks: ClaudeUserBlock[] = [];
  for (const part of parts) {
    if (part.type === 'image') {
      blocks.push({ type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } });
      continue;
    }
    const text = part.type === 'text' ? part.text : promptText([part]);
    if (text !== '') blocks.push({ type: 'text', text });
  }
  return blocks.length === 0 ? [{ type: 'text', text: input.text }] : blocks;
}

const IMAGE_REFUSED = '[Image could not be processed';

/** What the replay of a line with images says the CLI could not take (it puts a text in the image's place). */
function refusedImages(event: AgentEvent): ProtocolFact[] {
  const content = field(field(event, 'message'), 'content');
  if (!Array.isArray(content)) return [];
  return content.flatMap((block): ProtocolFact[] => {
    const text = stringOf(field(block, 'text'));
    if (field(block, 'type') !== 'text' || text?.startsWith(IMAGE_REFUSED) !== true) return [];
    const warning: CliMessage = { type: 'agent.warning', message: `Claude Code could not take an image of the prompt, and gave the model this instead: ${text}` };
    return [{ type: 'content', message: warning }];
  });
}

function act(state: ClaudeSessionState, ask: SessionAsk): ProtocolReaction {
  switch (ask.type) {
    case 'start': {
      const uuid = randomUUID();
      state.turn = { reading: dialect.createState(), unreplayed: new Set([uuid]), steers: new Map(), withImages: new Set(), results: 0, running: false, usage: undefined, abort: null };
      return { outputs: [{ type: 'write', line: userLine(state.turn, ask.input, uuid) }] };
    }
    case 'steer': {
      const turn = state.turn;
      if (turn === null) return NO_REACTION;
      const uuid = randomUUID();
      turn.unreplayed.add(uuid);
      turn.steers.set(uuid, ask.input);
      return { outputs: [{ type: 'write', line: userLine(turn, ask.input, uuid) }] };
    }
    case 'abort': {
      const turn = state.turn;
      if (turn === null) return NO_REACTION;
      const cancels = new Map<string, string>();
      const lines: unknown[] = [];
      for (const uuid of turn.unreplayed) {
        const id = request(state);
        cancels.set(id, uuid);
        lines.push({ type: 'control_request', request_id: id, request: { subtype: 'cancel_async_message', message_uuid: uuid } });
      }
      const interrupt = request(state);
      lines.push({ type: 'control_request', request_id: interrupt, request: { subtype: 'interrupt' } });
      turn.abort = { interrupt, cancels, interruptAnswered: false, killing: false };
      return { outputs: lines.map((line) => ({ type: 'write', line })) };
    }
    case 'end':
      return { outputs: [{ type: 'endInput' }] };
  }
}

function read(state: ClaudeSessionState, event: AgentEvent): ProtocolReaction {
  const turn = state.turn;
  // The CLI asks (`can_use_tool`, with `--permission-prompt-tool stdio`) and waits for the answer.
  if (event.type === 'control_request') return claudeControlRequest(event);
  if (event.type === 'agent-rx.tools-killed') return turn?.abort?.killing === true ? finish(state, turn) : NO_REACTION;
  if (event.type === 'result') {
    const result = known(event, 'result');
    const total = numberOf(result?.total_cost_usd);
    const cost = total === undefined ? undefined : Math.max(0, total - state.costSoFar);
    if (total !== undefined) state.costSoFar = total;
    if (result !== null) state.lastResultFailed = result.is_error;
    if (turn === null || result === null) return NO_REACTION;
    dialect.map(turn.reading, event);
    turn.results += 1;
    turn.running = false;
    const usage = claudeUsage(result, cost);
    if (usage !== undefined) turn.usage = addUsage(turn.usage, usage);
    return settle(state);
  }
  const answered = event.type === 'control_response' ? stringOf(field(field(event, 'response'), 'request_id')) : undefined;
  if (answered === INITIALIZE || answered === VERSION_REQUEST) return onOpening(state, answered, field(event, 'response'));
  if (turn === null) return NO_REACTION;
  if (event.type === 'control_response') return onControlResponse(state, turn, field(event, 'response'));
  dialect.map(turn.reading, event);
  if (event.type === 'user' && event['isReplay'] === true) {
    const uuid = stringOf(event['uuid']);
    if (uuid !== undefined && turn.unreplayed.delete(uuid)) turn.running = true;
    if (uuid !== undefined && turn.withImages.delete(uuid)) return { facts: refusedImages(event) };
  }
  return NO_REACTION;
}

/**
 * An answer to a request sent at the start: the CLI's version, kept; then `initialize`, at which
 * the session is announced (with the version when the CLI gave it) and the prompts may go. An
 * `initialize` the CLI refused leaves the announcement to its first turn's lines.
 */
function onOpening(state: ClaudeSessionState, request: string, response: unknown): ProtocolReaction {
  const ok = field(response, 'subtype') === 'success';
  if (request === VERSION_REQUEST) {
    if (ok) state.version = stringOf(field(field(response, 'response'), 'version'));
    return NO_REACTION;
  }
  const announced: ProtocolFact[] = ok && state.sessionId !== undefined ? [{ type: 'content', message: sessionHeader(state.resumed, state.sessionId, { agentVersion: state.version }) }] : [];
  return { facts: [...announced, { type: 'opened' }] };
}

function onControlResponse(state: ClaudeSessionState, turn: ClaudeTurn, response: unknown): ProtocolReaction {
  const abort = turn.abort;
  const id = stringOf(field(response, 'request_id'));
  if (abort === null || id === undefined) return NO_REACTION;
  if (id === abort.interrupt) {
    abort.interruptAnswered = true;
    return settle(state);
  }
  const uuid = abort.cancels.get(id);
  if (uuid === undefined) return NO_REACTION;
  abort.cancels.delete(id);
  const facts: ProtocolFact[] = [];
  if (field(field(response, 'response'), 'cancelled') === true) {
    // The line never runs. A steer that never reached the turn is dropped by the abort.
    turn.unreplayed.delete(uuid);
    const steer = turn.steers.get(uuid);
    if (steer !== undefined) facts.push({ type: 'inputRejected', input: steer, reason: 'aborted', message: 'the abort came before Claude Code took the steer' });
  }
  return { facts: [...facts, ...(settle(state).facts ?? [])] };
}

/** Ends the turn once Claude Code is done with every line written for it, or with the abort. */
function settle(state: ClaudeSessionState): ProtocolReaction {
  const turn = state.turn;
  if (turn === null) return NO_REACTION;
  const abort = turn.abort;
  // Nothing of the turn still runs or waits in the CLI (a cancelled line never runs).
  if (turn.running || turn.unreplayed.size > 0) return NO_REACTION;
  if (abort === null ? turn.results === 0 : abort.cancels.size > 0 || !abort.interruptAnswered) return NO_REACTION;
  if (abort !== null) {
    // The CLI ends the interrupted turn a moment before its tool's processes are gone: the turn
    // ends once they are (the processes the turn started).
    if (abort.killing) return NO_REACTION;
    abort.killing = true;
    return { outputs: [{ type: 'killTools' }] };
  }
  return finish(state, turn);
}

function finish(state: ClaudeSessionState, turn: ClaudeTurn): ProtocolReaction {
  state.turn = null;
  const outcome: TurnOutcome =
    turn.results === 0
      ? { kind: 'failed', reason: 'aborted', message: 'the turn was aborted before Claude Code began it' }
      : withUsage(outcomeOf(dialect, turn.reading, 'Claude Code'), turn.usage);
  return { facts: [{ type: 'turnEnded', outcome }] };
}

function withUsage(outcome: TurnOutcome, usage: Usage | undefined): TurnOutcome {
  if (outcome.kind !== 'completed') return outcome;
  const { usage: _last, ...rest } = outcome;
  return usage === undefined ? rest : { ...rest, usage };
}

function request(state: ClaudeSessionState): string {
  state.nextRequest += 1;
  return `agent-rx-${String(state.nextRequest)}`;
}
