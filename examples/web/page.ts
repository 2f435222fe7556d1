// The page's script (bundled by server.ts for the browser): runs the prompt on the server and shows
// the run as it streams in, with agent-rx/browser as an app would use it (here from the source).
// Runs stack as a conversation: each one is a block with its prompt, its answer and tool cards, and
// its outcome. Each run is one-shot (a new process; the agent does not see the earlier runs).
// A server with a fleet sends resumable streams (resumable.ts): the EventSource is then left to
// reconnect after a drop, the run goes on where it stopped, and Stop cancels it by its id.
// The server renders its mode into the page (`data-mode`, `data-recording` on <main>): in replay
// mode the agent plays a recording and does not read the prompt, and the page says so.
// In session mode (`data-mode="session"`) one agent process answers the whole conversation: the
// first prompt opens a session (GET /session, see sessions.ts), each prompt is a turn (a block),
// Enter while a turn runs queues the prompt as a follow-up (the next turn), Stop aborts the running
// turn (the process stays), and End session ends the process. A session with a `data-recording`
// is offline: pi's RPC replay agent plays the recording as every turn, and the page says so.
// Where the server's agent can ask before its tools (`data-ask="available"`: a real agent whose
// sessions take `permission`), "Ask before tools" opens the next session with permission `ask`:
// each `permission.requested` is a card (the tool, its kind, what it would do) with Allow, Always
// (where the agent offers `allow-always`) and Deny, which POST the `permission` command; its
// `permission.resolved` says the decision and who made it (you, the deadline, an abort, the turn's
// end) and closes the card.
// A fleet session (`data-fleet="session"`, fleet-sessions.ts) is a conversation that outlives the
// page: the tab keeps its id (sessionStorage), so a reload opens its stream again from the start
// (every turn so far, then the live ones), its stream reconnects after a drop, and End session lets
// it go (it falls asleep on the fleet) instead of ending a process.
// An image can go with a prompt (the file input under it: PNG, JPEG, GIF or WebP, at most 5 MB),
// as its bytes in base64 with their type: in a session, in the command's `parts`; for a run, POSTed
// to /attachments first and named in GET /run (an EventSource cannot send a body). An agent that
// cannot take it says so in the run's outcome (or the turn's `input.dropped`). A replay reads no
// prompt: the page offers no attachment then.
import type { Subscription } from 'rxjs';
import {
  fromAgentEventSource,
  fromSessionEventSource,
  IMAGE_MIME_TYPES,
  isTerminal,
  type CliMessage,
  type ImageMimeType,
  type PermissionDecision,
  type PermissionRequested,
  type PermissionResolved,
  type SessionCommand,
  type SessionMessage,
  type TerminalMessage,
  type EventSourceLike,
} from '../../lib/browser.js';
import { MAX_IMAGE_BYTES } from '../../lib/operators/prompt-parts.js';
import { resumingEventSource } from './resumable.js';

const app = byId('app', HTMLElement);
const form = byId('run-form', HTMLFormElement);
const promptInput = byId('prompt', HTMLTextAreaElement);
const promptLabel = byId('prompt-label', HTMLLabelElement);
const promptError = byId('prompt-error', HTMLElement);
const banner = byId('mode-banner', HTMLElement);
const runButton = byId('run', HTMLButtonElement);
const stopButton = byId('stop', HTMLButtonElement);
const clearButton = byId('clear', HTMLButtonElement);
const endButton = byId('end-session', HTMLButtonElement);
const askLabel = byId('ask-label', HTMLLabelElement);
const askInput = byId('ask', HTMLInputElement);
const agentNote = byId('agent-note', HTMLElement);
const hint = byId('prompt-hint', HTMLElement);
const status = byId('status', HTMLElement);
const transcript = byId('transcript', HTMLElement);
const attachRow = byId('attach', HTMLElement);
const imageInput = byId('image', HTMLInputElement);
const imageClear = byId('image-clear', HTMLButtonElement);
const imageNote = byId('image-note', HTMLElement);

/** An image attached to a prompt: its bytes in base64 and their type, as a prompt's image part takes them. */
interface PageImage {
  readonly data: string;
  readonly mimeType: ImageMimeType;
}

/** Whether one agent process answers the whole conversation (the server's session mode). */
const sessionMode = app.dataset['mode'] === 'session';
/** The recording a replay server plays for every prompt (or every turn of a session); `null` when the agent itself runs. */
const recording = app.dataset['mode'] === 'replay' || (sessionMode && (app.dataset['recording'] ?? '') !== '') ? (app.dataset['recording'] ?? '') : null;
/** Whether the server's sessions can ask before their tools (a real agent whose sessions take `permission`). */
const canAsk = sessionMode && app.dataset['ask'] === 'available';
/** Whether a session is a fleet session: a conversation that outlives this page, kept by its id for the tab. */
const onFleet = sessionMode && app.dataset['fleet'] === 'session';
/** Where the tab keeps its fleet session's id (a reload opens it again). */
const SESSION_KEY = 'agent-rx.web.session';
/** EventSource.OPEN. */
const OPEN = 1;
/** Command ids unique across the page's loads: a fleet session's commands are taken once by id. */
const pageKey = Math.random().toString(36).slice(2, 10);

/** The run on screen: its subscription, its block, and the fleet's id of it once its stream said it. */
interface CurrentRun {
  subscription: Subscription | null;
  readonly block: RunBlock;
  runId: string | null;
}

let current: CurrentRun | null = null;

if (recording !== null) {
  banner.hidden = false;
  banner.textContent = `Replay mode: every run plays back the recording “${recording}”. The prompt is sent, but the recording does not read it; start the server with --real to run the agent itself.`;
  promptLabel.textContent = 'Prompt (not read: a recording is played)';
  promptInput.placeholder = 'Any prompt: the recording plays the same run';
}

if (sessionMode) {
  banner.hidden = false;
  banner.dataset['kind'] = 'session';
  banner.textContent = onFleet
    ? 'Session mode on a fleet · a conversation whose agent runs on one of the fleet’s workers and falls asleep there when idle. This tab keeps it: a reload shows it again and goes on with it, and a worker that dies leaves it to another. Stop aborts the running turn; End session lets it go.'
    : recording === null
      ? 'Session mode · one session: the agent remembers the conversation. One agent process answers every prompt until End session (closing the tab ends it too); Stop aborts the running turn and keeps the process.'
      : `Session mode, offline · one session of pi's RPC replay agent: one process answers every prompt with the recording “${recording}” (it does not read the prompt) until End session (closing the tab ends it too); Stop aborts the running turn and keeps the process. Start the server with --real --session to talk to pi itself.`;
  agentNote.textContent = onFleet
    ? 'streamed with server-sent events that resume after a drop; Stop aborts the running turn; the conversation outlives this tab.'
    : 'streamed with server-sent events; Stop aborts the running turn, End session or closing the tab ends the agent.';
  hint.textContent = 'Enter sends, Shift+Enter starts a new line. While a turn runs, Enter queues the prompt as a follow-up: the next turn.';
  runButton.textContent = 'Send';
  endButton.hidden = false;
  askLabel.hidden = !canAsk;
}

// A replay reads no prompt: nothing to attach.
attachRow.hidden = app.dataset['mode'] === 'replay';

/** The attached image, read when it was chosen (`null`: none, or one that cannot go). */
let attached: Promise<PageImage | null> = Promise.resolve(null);

imageInput.addEventListener('change', () => {
  const file = imageInput.files?.[0];
  imageClear.hidden = file === undefined;
  attached = file === undefined ? Promise.resolve(null) : readImage(file);
  void attached.then((image) => {
    if (file !== undefined && image !== null) showImageNote(`${file.name} · ${kilobytes(file.size)}: goes with the next prompt`, 'ok');
  });
  if (file === undefined) showImageNote('', 'ok');
});

imageClear.addEventListener('click', () => {
  clearImage();
});

form.addEventListener('submit', (event) => {
  event.preventDefault();
  if (current !== null) return;
  const prompt = promptInput.value.trim();
  if (prompt === '') {
    showPromptError('Type a prompt first: a blank prompt is not sent.');
    return;
  }
  showPromptError(null);
  const image = attached;
  void image.then((read) => {
    // An image that was chosen but cannot go (its note says why) stops the prompt: nothing is dropped.
    if (read === null && imageInput.files?.[0] !== undefined) return;
    if (current !== null) return;
    promptInput.value = '';
    clearImage();
    if (sessionMode) sendPrompt(prompt, read);
    else start(prompt, read);
  });
});

// Reads a chosen file into base64 with its type; `null` (and a note) when it cannot go.
async function readImage(file: File): Promise<PageImage | null> {
  const mimeType = (IMAGE_MIME_TYPES as readonly string[]).includes(file.type) ? (file.type as ImageMimeType) : null;
  if (mimeType === null) {
    showImageNote(`${file.name} is not a PNG, JPEG, GIF or WebP image: choose another, or Remove`, 'bad');
    return null;
  }
  if (file.size > MAX_IMAGE_BYTES) {
    showImageNote(`${file.name} has ${kilobytes(file.size)}; an image may have ${kilobytes(MAX_IMAGE_BYTES)}: choose another, or Remove`, 'bad');
    return null;
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let start = 0; start < bytes.length; start += 0x8000) binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
  return { data: btoa(binary), mimeType };
}

function clearImage(): void {
  imageInput.value = '';
  imageClear.hidden = true;
  attached = Promise.resolve(null);
  showImageNote('', 'ok');
}

function showImageNote(text: string, state: 'ok' | 'bad'): void {
  imageNote.textContent = text;
  imageNote.dataset['state'] = state;
}

function kilobytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${String(Math.ceil(bytes / 1024))} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

// Enter sends; Shift+Enter (or an input method composing) makes a new line.
promptInput.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  form.requestSubmit();
});

promptInput.addEventListener('input', () => {
  if (promptInput.value.trim() !== '') showPromptError(null);
});

// Unsubscribing closes the EventSource; the server sees its client leave and stops the agent. A
// fleet's run outlives a closed stream for a while (it may reconnect): it is cancelled by its id.
stopButton.addEventListener('click', () => {
  if (sessionMode) {
    abortTurn();
    return;
  }
  const run = current;
  if (run === null) return;
  run.subscription?.unsubscribe();
  if (run.runId !== null) void fetch(cancelUrl(run.runId), { method: 'POST', keepalive: true }).catch(() => undefined);
  run.block.stopped();
  finish('stopped', '■ Stopped');
});

clearButton.addEventListener('click', () => {
  if (current !== null || live?.turn != null || (live?.queued.size ?? 0) > 0) return;
  transcript.replaceChildren();
  clearButton.disabled = true;
  // An open session stays open (the agent still remembers): only the screen is cleared.
  if (live === null) setStatus('idle', 'Idle');
});

endButton.addEventListener('click', () => {
  endSession();
});

// Closing or reloading the tab: the same cancel, as a beacon (it outlives the page).
window.addEventListener('pagehide', () => {
  const runId = current?.runId ?? null;
  if (runId !== null) navigator.sendBeacon(cancelUrl(runId));
});

function cancelUrl(runId: string): string {
  return `/cancel?run=${encodeURIComponent(runId)}`;
}

function start(prompt: string, image: PageImage | null): void {
  const block = createRunBlock(transcript, prompt, 'running', undefined, image);
  const run: CurrentRun = { subscription: null, block, runId: null };
  current = run;
  setRunning(true);
  setStatus('running', 'Running…');
  if (image === null) {
    stream(run, `/run?prompt=${encodeURIComponent(prompt)}`);
    return;
  }
  // The image first: an EventSource's GET cannot carry it; the run names it by its id.
  void attach(image).then((attachment) => {
    if (current !== run) return; // stopped meanwhile
    if ('problem' in attachment) {
      block.finish('failed', '✗ Not run · the image was not taken', attachment.problem);
      finish('failed', '✗ The image was not taken');
      return;
    }
    stream(run, `/run?prompt=${encodeURIComponent(prompt)}&image=${encodeURIComponent(attachment.id)}`);
  });
}

// POST /attachments: the image's id for the run, or why the server did not take it.
async function attach(image: PageImage): Promise<{ readonly id: string } | { readonly problem: string }> {
  try {
    const response = await fetch('/attachments', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(image) });
    if (!response.ok) return { problem: `HTTP ${String(response.status)}: ${(await response.text()).trim()}` };
    const { id } = (await response.json()) as { readonly id?: unknown };
    return typeof id === 'string' ? { id } : { problem: 'the server gave no id for the image' };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

function stream(run: CurrentRun, url: string): void {
  const { block } = run;
  const startedAt = performance.now();
  const source = resumingEventSource(new EventSource(url), {
    onRun: ({ runId }) => {
      run.runId = runId;
    },
  });
  const subscription = fromAgentEventSource(source).subscribe((message) => {
    block.show(message);
    if (!isTerminal(message)) return;
    block.ended(message, describeEnd(message, performance.now() - startedAt));
    finish(message.type === 'terminal.completed' ? 'completed' : 'failed', shortEnd(message, performance.now() - startedAt));
  });
  if (current === run) run.subscription = subscription;
}

/** The open session: its stream, its id once the stream said it, its running turn and its queued prompts. */
interface LiveSession {
  readonly source: EventSourceLike;
  /** The session's messages, read by fromSessionEventSource; unsubscribing closes the stream. */
  subscription: Subscription | null;
  id: string | null;
  /** Commands sent before the stream said the session's id. */
  readonly unsent: SessionCommand[];
  /** The prompts waiting for their turn, by command id. */
  readonly queued: Map<string, RunBlock>;
  turn: { readonly block: RunBlock; readonly number: number; readonly startedAt: number } | null;
  readonly line: HTMLElement;
  ending: boolean;
  /** The agent asks before each tool (opened with "Ask before tools"). */
  readonly asks: boolean;
  /** Its permission requests still waiting for a decision. */
  readonly asking: Set<string>;
}

let live: LiveSession | null = null;
let commandCount = 0;

// A fleet session this tab had before a reload: its whole conversation again, and on with it.
const kept = onFleet ? sessionStorage.getItem(SESSION_KEY) : null;
if (kept !== null) openSession(kept);

// A prompt of the conversation: it opens the session if none is open, starts a turn when none runs,
// and is queued as a follow-up (the next turn) while one runs.
function sendPrompt(prompt: string, image: PageImage | null): void {
  const session = live ?? openSession();
  commandCount += 1;
  const id = commandId();
  const busy = session.turn !== null || session.queued.size > 0;
  const block = createRunBlock(transcript, prompt, 'queued', answerFor(session), image);
  block.note(busy ? 'queued as a follow-up: it runs as the next turn, after the running one' : 'sent to the session');
  session.queued.set(id, block);
  // The image goes in the command, as its bytes in base64 with their type.
  const parts = image === null ? {} : { parts: [{ type: 'image' as const, data: image.data, mimeType: image.mimeType }] };
  send(session, busy ? { type: 'follow-up', text: prompt, id, ...parts } : { type: 'prompt', text: prompt, id, ...parts });
  updateSessionControls();
}

// A command's id: `c<n>`; on a fleet, with this page load's key (an earlier load's `c1` was taken).
function commandId(): string {
  return onFleet ? `${pageKey}-c${String(commandCount)}` : `c${String(commandCount)}`;
}

// Opens a session: a new one, or on a fleet the tab's conversation `kept` (its log from the start).
function openSession(kept: string | null = null): LiveSession {
  const line = element('div', 'note session-line', kept === null ? 'session: starting the agent…' : `session ${kept}: the conversation so far…`);
  transcript.append(line);
  const asks = canAsk && askInput.checked;
  const url = kept !== null ? `/session?id=${encodeURIComponent(kept)}` : asks ? '/session?permission=ask' : '/session';
  // A fleet session's stream resumes after a drop (the browser reconnects with its last event id).
  const source = onFleet ? resumingEventSource(new EventSource(url), { event: 'session' }) : new EventSource(url);
  const session: LiveSession = { source, subscription: null, id: null, unsent: [], queued: new Map(), turn: null, line, ending: false, asks, asking: new Set() };
  live = session;
  if (kept === null) setStatus('running', 'Starting the agent…');
  else setStatus('idle', 'The conversation so far');
  session.source.addEventListener('session', (event) => {
    const id = readSessionId((event as MessageEvent<unknown>).data);
    if (id === null || session.id !== null) return;
    session.id = id;
    if (onFleet) sessionStorage.setItem(SESSION_KEY, id);
    for (const command of session.unsent.splice(0)) post(session, command);
  });
  // The session's messages. A stream that closes before the session's terminal (the server went
  // away) ends as a session whose process died: the running turn's turn.failed, then the session's
  // terminal.failed (missing-terminal), and no reconnect: the session cannot be picked up again.
  session.subscription = fromSessionEventSource(session.source).subscribe((message) => {
    onSessionMessage(session, message);
  });
  updateSessionControls();
  return session;
}

// A decision on a permission card: the `permission` command, POSTed as any other. `null` once the
// server took it (the stream then says permission.resolved), else why it was not sent.
async function decide(session: LiveSession, requestId: string, decision: PermissionDecision): Promise<string | null> {
  if (session.id === null || live !== session) return 'the session is not open';
  commandCount += 1;
  const command: SessionCommand = { type: 'permission', requestId, decision, id: commandId() };
  try {
    const response = await fetch(`/session/${encodeURIComponent(session.id)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(command) });
    return response.ok ? null : `HTTP ${String(response.status)}: ${(await response.text()).trim()}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function answerFor(session: LiveSession): Answer {
  return (requestId, decision) => decide(session, requestId, decision);
}

function send(session: LiveSession, command: SessionCommand): void {
  if (session.id === null) session.unsent.push(command);
  else post(session, command);
}

function post(session: LiveSession, command: SessionCommand): void {
  if (session.id === null) return;
  void fetch(`/session/${encodeURIComponent(session.id)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(command) }).then(
    async (response) => {
      if (response.ok || command.id === undefined) return;
      const block = session.queued.get(command.id);
      session.queued.delete(command.id);
      block?.finish('failed', `✗ Not sent · HTTP ${String(response.status)}`, (await response.text()).trim());
      updateSessionControls();
    },
    () => undefined, // the stream's end says it
  );
}

// Stop: the running turn ends (`turn.failed`, aborted); the agent process stays for the next prompt.
function abortTurn(): void {
  const session = live;
  if (session?.turn == null) return;
  send(session, { type: 'abort' });
  setStatus('running', `Aborting turn ${String(session.turn.number)}…`);
  stopButton.disabled = true;
}

// End session: a running turn is aborted first, then the agent's input closes and it exits.
function endSession(): void {
  const session = live;
  if (session === null || session.ending) return;
  session.ending = true;
  if (session.turn !== null) send(session, { type: 'abort' });
  setStatus('running', 'Ending the session…');
  updateSessionControls();
  if (session.id === null) {
    // Nothing sent yet: closing the stream stops the agent.
    sessionOver(session, 'ended', '■ Session ended', 'The agent process ended with the session.');
    return;
  }
  void fetch(`/session/${encodeURIComponent(session.id)}/end`, { method: 'POST' }).catch(() => undefined);
  // A fleet session has no end of its own: this page lets it go, and it falls asleep when idle.
  if (onFleet) sessionStorage.removeItem(SESSION_KEY);
  if (onFleet) sessionOver(session, 'ended', '■ Session ended on this page', 'The conversation falls asleep on the fleet when idle; the next prompt starts a new one.');
}

function onSessionMessage(session: LiveSession, message: SessionMessage): void {
  if (live !== session) return;
  switch (message.type) {
    case 'input.accepted':
      if (message.as === 'follow-up' && message.commandId !== undefined) session.queued.get(message.commandId)?.note(`queued after turn ${String(message.turn)} (a follow-up)`);
      return;
    case 'input.dropped': {
      // A decision that came too late (the request was settled first): its card says so.
      if (message.kind === 'permission' && message.requestId !== undefined) session.turn?.block.permissionNote(message.requestId, `not taken: ${message.message}`);
      const block = message.commandId === undefined ? undefined : session.queued.get(message.commandId);
      if (block === undefined || message.commandId === undefined) return;
      session.queued.delete(message.commandId);
      block.finish(message.reason === 'aborted' || message.reason === 'session-ended' ? 'stopped' : 'failed', `■ Not run · ${message.reason}`, message.message);
      // Between turns, the status says it too (a prompt with an image the agent cannot take, say).
      if (session.turn === null && message.reason === 'unsupported') setStatus('failed', `✗ Not run · ${message.reason}`);
      updateSessionControls();
      return;
    }
    case 'turn.started': {
      const waiting = message.commandId === undefined ? undefined : session.queued.get(message.commandId);
      if (message.commandId !== undefined) session.queued.delete(message.commandId);
      const block = waiting ?? createRunBlock(transcript, message.prompt, 'queued', answerFor(session));
      block.begin(`turn ${String(message.turn)}`);
      session.turn = { block, number: message.turn, startedAt: performance.now() };
      setStatus('running', `Turn ${String(message.turn)} running…`);
      updateSessionControls();
      return;
    }
    case 'turn.completed':
    case 'turn.failed': {
      const turn = session.turn;
      if (turn === null) return;
      session.turn = null;
      session.asking.clear();
      const seconds = `${((performance.now() - turn.startedAt) / 1000).toFixed(1)} s`;
      if (message.type === 'turn.completed') {
        const tokens = message.usage === undefined ? '' : ` · ${message.usage.totalTokens} tokens`;
        const reason = message.stopReason === 'end_turn' ? '' : ` · ${message.stopReason}`;
        turn.block.finish('completed', `✓ Completed${reason}${tokens} · ${seconds}`, null);
        setStatus('completed', `✓ Turn ${String(message.turn)} completed`);
      } else if (message.reason === 'aborted') {
        turn.block.finish('stopped', `■ Aborted · ${seconds}`, 'Stop aborted this turn; the agent process stays for the next prompt.');
        setStatus('stopped', `■ Turn ${String(message.turn)} aborted · the agent process stays`);
      } else {
        turn.block.finish('failed', `✗ Failed · ${message.reason} · ${seconds}`, message.message);
        setStatus('failed', `✗ Turn ${String(message.turn)} failed · ${message.reason}`);
      }
      updateSessionControls();
      return;
    }
    case 'terminal.completed':
      sessionOver(session, 'ended', `■ Session ended${message.usage === undefined ? '' : ` · ${message.usage.totalTokens} tokens in all`}`, 'The agent process has exited.');
      return;
    case 'terminal.failed':
      sessionOver(session, 'failed', `✗ Session failed · ${message.reason}`, message.message);
      return;
    case 'permission.requested':
    case 'permission.resolved':
      // Its card, in the running turn (every request is settled before its turn ends).
      if (message.type === 'permission.requested') session.asking.add(message.requestId);
      else session.asking.delete(message.requestId);
      session.turn?.block.show(message);
      if (session.turn === null) return;
      if (message.type === 'permission.requested') setStatus('asking', `Turn ${String(session.turn.number)} waits for your decision: ${message.tool}`);
      else if (session.asking.size === 0) setStatus('running', `Turn ${String(session.turn.number)} running…`);
      return;
    case 'session.passivated':
      transcript.append(element('div', 'note', `idle for ${String(message.idleMs)} ms: the agent's process ended and the conversation was saved; the next prompt resumes it`));
      return;
    default:
      // The agent's session id goes on the session's line; other content into the running turn,
      // and outside one (a warning) a note.
      if (message.type === 'session.started' || message.type === 'session.resumed') session.line.textContent = onFleet ? `session ${session.id ?? message.sessionId} · a conversation on the fleet: its agent sleeps when idle and wakes on any worker` : `session ${message.sessionId} · one agent process for the conversation${session.asks ? ' · it asks before each tool' : ''}`;
      else if (session.turn !== null) session.turn.block.show(message);
      else if (message.type === 'agent.warning') transcript.append(element('div', 'note', `the agent warns: ${message.message}`));
  }
}

// The session is over: its terminal, shown at the end of the conversation. The next prompt opens a new one.
function sessionOver(session: LiveSession, state: 'ended' | 'failed', title: string, detail: string): void {
  live = null;
  // A fleet session's own terminal (read from its open stream) ends it for the tab too; a stream
  // that broke (the page unloading, the server gone) leaves the id for the next load.
  if (onFleet && session.source.readyState === OPEN) sessionStorage.removeItem(SESSION_KEY);
  session.subscription?.unsubscribe(); // closes the stream, and the server stops the agent with it
  session.turn?.block.finish('failed', '✗ Failed · the session ended first', detail);
  for (const block of session.queued.values()) block.finish('stopped', '■ Not run · session-ended', 'The session ended before this prompt ran.');
  const end = element('div', 'session-end');
  end.dataset['state'] = state;
  end.append(element('div', 'session-end-title', title), element('div', 'outcome-message', detail));
  transcript.append(end);
  end.scrollIntoView({ block: 'end' });
  setStatus(state, state === 'ended' ? '■ Session ended' : title);
  updateSessionControls();
}

function updateSessionControls(): void {
  const session = live;
  // Asking is chosen when a session opens: the box waits for the next one.
  askInput.disabled = session !== null;
  askLabel.dataset['disabled'] = String(session !== null);
  askLabel.title = session === null ? 'The agent asks before each tool; a card here allows or denies it' : 'Chosen when a session opens: End session, then the next prompt opens one with this choice';
  const turnRuns = session?.turn != null;
  runButton.disabled = session?.ending === true;
  runButton.textContent = turnRuns ? 'Follow up' : 'Send';
  stopButton.disabled = !turnRuns || session.ending;
  endButton.disabled = session === null || session.ending;
  clearButton.disabled = turnRuns || (session?.queued.size ?? 0) > 0 || transcript.childElementCount === 0;
}

function readSessionId(data: unknown): string | null {
  if (typeof data !== 'string') return null;
  try {
    const value: unknown = JSON.parse(data);
    const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
    return typeof id === 'string' && id !== '' ? id : null;
  } catch {
    return null;
  }
}

function finish(state: 'completed' | 'failed' | 'stopped', text: string): void {
  current = null;
  setRunning(false);
  setStatus(state, text);
}

function setRunning(running: boolean): void {
  runButton.disabled = running;
  stopButton.disabled = !running;
  clearButton.disabled = running || transcript.childElementCount === 0;
  promptInput.readOnly = running;
}

function setStatus(state: string, text: string): void {
  status.dataset['state'] = state;
  status.textContent = text;
}

function showPromptError(text: string | null): void {
  promptError.hidden = text === null;
  promptError.textContent = text ?? '';
  if (text === null) {
    promptInput.removeAttribute('aria-invalid');
  } else {
    promptInput.setAttribute('aria-invalid', 'true');
    promptInput.focus();
  }
}

// The status line: one short line (the run's block holds the whole outcome).
function shortEnd(message: TerminalMessage, elapsedMs: number): string {
  return message.type === 'terminal.failed' ? `✗ Failed · ${message.reason}` : describeEnd(message, elapsedMs).title;
}

// A run's outcome: a title, and for a failure the agent-rx message that says what happened.
function describeEnd(message: TerminalMessage, elapsedMs: number): { readonly title: string; readonly detail: string | null } {
  const seconds = `${(elapsedMs / 1000).toFixed(1)} s`;
  if (message.type === 'terminal.failed') return { title: `✗ Failed · ${message.reason} · ${seconds}`, detail: message.message };
  const tokens = message.usage === undefined ? '' : ` · ${message.usage.totalTokens} tokens`;
  const reason = message.stopReason === 'end_turn' ? '' : ` · ${message.stopReason}`;
  return { title: `✓ Completed${reason}${tokens} · ${seconds}`, detail: null };
}

type ToolState = 'running' | 'completed' | 'failed' | 'stopped' | 'unfinished';

const TOOL_STATE_TEXT: Readonly<Record<ToolState, string>> = {
  running: 'running…',
  completed: '✓ completed',
  failed: '✗ failed',
  stopped: '■ stopped',
  unfinished: '? no result',
};

/** One run (or one turn of a session) of the conversation on the page. */
interface RunBlock {
  /** A line of its own about it (queued, sent). */
  note(text: string): void;
  /** A queued prompt's turn began. */
  begin(label: string): void;
  /** It ended: its outcome, and tools still running end with it (completed: no result). */
  finish(state: 'completed' | 'failed' | 'stopped', title: string, detail: string | null): void;
  /** Renders one of the run's messages. */
  show(message: CliMessage): void;
  /** The run ended by itself: its outcome, and tools still running end with it. */
  ended(message: TerminalMessage, outcome: { readonly title: string; readonly detail: string | null }): void;
  /** The page stopped the run. */
  stopped(): void;
  /** A line on the card of permission request `requestId` (a decision that was not taken). */
  permissionNote(requestId: string, text: string): void;
}

/** Sends the page's decision on a permission request: `null` once sent, else why it was not. */
type Answer = (requestId: string, decision: PermissionDecision) => Promise<string | null>;

// Appends a run's block to `root` (its prompt first) and renders the run into it: text as it
// streams, tools as cards, permission requests as cards that `answer` decides (none: they show
// what was decided), the outcome at the end.
function createRunBlock(root: HTMLElement, prompt: string, initial: 'running' | 'queued' = 'running', answer?: Answer, image: PageImage | null = null): RunBlock {
  const block = element('article', 'run');
  block.dataset['state'] = initial;
  const body = element('div', 'run-body');
  const outcome = element('div', 'outcome');
  outcome.hidden = true;
  block.append(element('div', 'prompt', prompt));
  if (image !== null) {
    const picture = document.createElement('img');
    picture.className = 'prompt-image';
    picture.alt = 'the image sent with this prompt';
    picture.src = `data:${image.mimeType};base64,${image.data}`;
    block.append(picture);
  }
  if (recording !== null) block.append(element('div', 'note replayed', `a recording is played (${recording}): the agent does not read this prompt`));
  const about = element('div', 'note turn-note');
  about.hidden = true;
  block.append(about, body, outcome);
  root.append(block);
  block.scrollIntoView({ block: 'end' });

  let answerText: HTMLElement | null = null; // the text block being written; a tool call starts a new one
  const tools = new Map<string, { card: HTMLElement; state: HTMLElement; output: HTMLElement }>();
  const permissions = new Map<string, PermissionCard>();
  // Requests still open when the turn or run ends (its stream broke): nothing will decide them now.
  const endPermissions = (text: string) => {
    for (const card of permissions.values()) card.unanswered(text);
  };
  const setToolState = (tool: { card: HTMLElement; state: HTMLElement }, state: ToolState, text = TOOL_STATE_TEXT[state]) => {
    tool.card.dataset['state'] = state;
    tool.state.textContent = text;
  };
  // The tools that never got their result end with the run.
  const endTools = (state: ToolState, text: string) => {
    for (const tool of tools.values()) if (tool.card.dataset['state'] === 'running') setToolState(tool, state, text);
  };
  const end = (state: 'completed' | 'failed' | 'stopped', title: string, detail: string | null) => {
    block.dataset['state'] = state;
    outcome.dataset['state'] = state;
    outcome.hidden = false;
    outcome.replaceChildren(element('div', 'outcome-title', title));
    if (detail !== null) outcome.append(element('div', 'outcome-message', detail));
  };

  const show = (message: CliMessage): void => {
    switch (message.type) {
      case 'session.started':
      case 'session.resumed':
        body.append(element('div', 'note', `session ${message.sessionId}`));
        break;
      case 'assistant':
        answerText ??= body.appendChild(element('div', 'assistant'));
        answerText.append(message.text); // a delta
        break;
      case 'assistant.withdrawn': {
        // The agent revised text it had streamed: take it back from the end of the answer.
        const shown = answerText?.textContent ?? '';
        if (answerText !== null && shown.endsWith(message.text)) answerText.textContent = shown.slice(0, shown.length - message.text.length);
        break;
      }
      case 'assistant.thought': {
        const details = element('details');
        details.append(element('summary', undefined, 'thinking'), element('pre', undefined, message.text));
        body.append(details);
        answerText = null;
        break;
      }
      case 'tool.call': {
        const card = element('div', 'tool');
        const head = element('div', 'tool-head');
        const state = element('span', 'tool-state');
        head.append(element('b', undefined, `▸ ${message.name}`), element('span', 'tool-input', summarize(message.summary, message.input)), state);
        const output = element('pre');
        card.append(head, output);
        body.append(card);
        const tool = { card, state, output };
        tools.set(message.toolCallId, tool);
        setToolState(tool, 'running');
        answerText = null;
        break;
      }
      case 'tool.update':
      case 'tool.completed':
      case 'tool.failed': {
        const tool = tools.get(message.toolCallId);
        if (tool === undefined) break;
        tool.output.textContent = message.output; // each update replaces the previous one
        if (message.type !== 'tool.update') setToolState(tool, message.type === 'tool.completed' ? 'completed' : 'failed');
        break;
      }
      case 'permission.requested': {
        // In its tool's card when the call came first (pi, Claude Code), else in the answer's flow.
        const card = createPermissionCard(message, answer);
        permissions.set(message.requestId, card);
        const tool = message.toolCallId === undefined ? undefined : tools.get(message.toolCallId);
        if (tool === undefined) body.append(card.root);
        else tool.card.append(card.root);
        card.root.scrollIntoView({ block: 'nearest' });
        answerText = null;
        break;
      }
      case 'permission.resolved':
        permissions.get(message.requestId)?.resolved(message);
        break;
      case 'agent.retry':
        body.append(
          element(
            'div',
            'note',
            `the agent retries${message.attempt === undefined ? '' : ` (attempt ${message.attempt}${message.maxAttempts === undefined ? '' : ` of ${message.maxAttempts}`})`}${message.delayMs === undefined ? '' : ` in ${message.delayMs} ms`}: ${message.reason}`,
          ),
        );
        break;
      case 'agent.warning':
        body.append(element('div', 'note', `the agent warns: ${message.message}`));
        break;
      case 'run.retrying':
        body.replaceChildren(element('div', 'note', `attempt ${message.attempt} in ${message.delayMs} ms, after: ${message.failure.message}`));
        tools.clear();
        permissions.clear();
        answerText = null;
        break;
      case 'terminal.completed':
      case 'terminal.failed':
        break; // ended() shows it
    }
  };

  const finish = (state: 'completed' | 'failed' | 'stopped', title: string, detail: string | null) => {
    endPermissions('not decided: the turn ended first');
    if (state === 'completed') endTools('unfinished', TOOL_STATE_TEXT.unfinished);
    else if (state === 'stopped') endTools('stopped', '■ stopped with the turn');
    else endTools('failed', '✗ failed: the turn ended first');
    end(state, title, detail);
  };

  return {
    show,
    note: (text) => {
      about.hidden = false;
      about.textContent = text;
    },
    begin: (label) => {
      block.dataset['state'] = 'running';
      about.hidden = false;
      about.textContent = label;
      block.scrollIntoView({ block: 'end' });
    },
    finish,
    ended: (message, { title, detail }) => {
      endPermissions('not decided: the run ended first');
      if (message.type === 'terminal.completed') {
        endTools('unfinished', TOOL_STATE_TEXT.unfinished);
        end('completed', title, detail);
      } else if (message.reason === 'stopped') {
        endTools('stopped', '■ stopped with the run');
        end('stopped', title, detail);
      } else {
        endTools('failed', '✗ failed: the run ended first');
        end('failed', title, detail);
      }
    },
    permissionNote: (requestId, text) => {
      permissions.get(requestId)?.note(text);
    },
    stopped: () => {
      endPermissions('not decided: the run was stopped');
      endTools('stopped', '■ stopped with the run');
      end('stopped', '■ Stopped', 'The server ends the agent and its processes.');
    },
  };
}

/** A permission request on the page: its card, and how it ends. */
interface PermissionCard {
  readonly root: HTMLElement;
  /** The decision, and who made it: the card closes. */
  resolved(message: PermissionResolved): void;
  /** Closes a card still open when nothing can decide it any more. */
  unanswered(text: string): void;
  /** A line under its buttons. */
  note(text: string): void;
}

const DECISION_TEXT: Readonly<Record<PermissionDecision, string>> = {
  allow: '✓ Allowed',
  'allow-always': '✓ Allowed, and from now on',
  deny: '✗ Denied',
  'deny-always': '✗ Denied, and from now on',
};

const RESOLVER_TEXT: Readonly<Record<PermissionResolved['by'], string>> = {
  caller: 'by you',
  policy: "by the session's policy",
  deadline: 'no decision in time',
  abort: 'the turn was aborted',
  'turn-end': 'the turn ended first',
  'run-end': 'the agent exited first',
};

// A permission request's card: the tool, its kind, what it would do (the command, the path), and
// the decisions the agent takes (Allow; Always where it offers `allow-always`; Deny). A click sends
// the decision with `answer` and holds the buttons until `permission.resolved` closes the card.
// Without `answer` (a run: its policy decides) the card only shows the request and its decision.
function createPermissionCard(request: PermissionRequested, answer: Answer | undefined): PermissionCard {
  const root = element('div', 'permission');
  root.dataset['state'] = 'pending';
  root.dataset['requestId'] = request.requestId;
  root.setAttribute('role', 'group');
  root.setAttribute('aria-label', `permission request: ${request.tool}`);
  const state = element('span', 'permission-state', answer === undefined ? 'waiting for the policy' : 'waiting for your decision');
  const head = element('div', 'permission-head');
  head.append(element('b', undefined, `Allow ${request.tool}?`), element('span', 'permission-kind', request.kind), state);
  // The whole of it, never cut: this is what is allowed.
  const title = element('code', 'permission-title', request.title !== '' ? request.title : JSON.stringify(request.input));
  const actions = element('div', 'permission-actions');
  const notes = element('div', 'note permission-note');
  notes.hidden = true;
  root.append(head, title, actions, notes);
  const choices: [PermissionDecision, string, string][] = [['allow', 'allow', 'Allow']];
  if (request.options.includes('allow-always')) choices.push(['allow-always', 'always', 'Always allow']);
  choices.push(['deny', 'deny', 'Deny']);
  const buttons = choices.map(([decision, className, text]) => {
    const button = element('button', className, text) as HTMLButtonElement;
    button.type = 'button';
    button.dataset['decision'] = decision;
    button.setAttribute('aria-pressed', 'false');
    return button;
  });
  let open = true;
  const hold = (held: boolean) => {
    for (const button of buttons) button.disabled = held;
  };
  const note = (text: string) => {
    notes.hidden = false;
    notes.textContent = text;
  };
  if (answer !== undefined) {
    actions.append(...buttons);
    for (const button of buttons) {
      button.addEventListener('click', () => {
        const decision = button.dataset['decision'] as PermissionDecision;
        hold(true);
        button.setAttribute('aria-pressed', 'true');
        state.textContent = `sending: ${button.textContent}…`;
        void answer(request.requestId, decision).then((problem) => {
          if (problem === null || !open) return;
          // Not sent: the request still waits, and may be decided again.
          button.setAttribute('aria-pressed', 'false');
          state.textContent = 'waiting for your decision';
          note(`not sent: ${problem}`);
          hold(false);
        });
      });
    }
  } else {
    actions.hidden = true;
  }
  const close = (stateName: string, text: string) => {
    open = false;
    hold(true);
    root.dataset['state'] = stateName;
    state.textContent = text;
  };
  return {
    root,
    resolved: (message) => {
      if (!open) return;
      root.dataset['decision'] = message.decision;
      root.dataset['by'] = message.by;
      close(message.decision.startsWith('allow') ? 'allowed' : 'denied', `${DECISION_TEXT[message.decision]} · ${RESOLVER_TEXT[message.by]}`);
    },
    unanswered: (text) => {
      if (open) close('unanswered', text);
    },
    note,
  };
}

// A tool call in one line: what it does (its summary: the command, the path), else its input as JSON.
function summarize(summary: string | undefined, input: unknown): string {
  const text = summary ?? (typeof input === 'string' ? input : JSON.stringify(input));
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function element(tag: string, className?: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`the page has no #${id}`);
  return node;
}
