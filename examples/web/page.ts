// The page's script (bundled by server.ts for the browser): runs the prompt on the server and shows
// the run as it streams in, with agent-rx/browser as an app would use it (here from the source).
// Runs stack as a conversation: each one is a block with its prompt, its answer and tool cards, and
// its outcome. Each run is one-shot (a new process; the agent does not see the earlier runs).
// A server with a fleet sends resumable streams (resumable.ts): the EventSource is then left to
// reconnect after a drop, the run goes on where it stopped, and Stop cancels it by its id.
// The server renders its mode into the page (`data-mode`, `data-recording` on <main>): in replay
// mode the agent plays a recording and does not read the prompt, and the page says so.
import type { Subscription } from 'rxjs';
import { fromAgentEventSource, isTerminal, type CliMessage, type TerminalMessage } from '../../lib/browser.js';
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
const status = byId('status', HTMLElement);
const transcript = byId('transcript', HTMLElement);

/** The recording a replay server plays for every prompt; `null` when the agent itself runs. */
const recording = app.dataset['mode'] === 'replay' ? (app.dataset['recording'] ?? '') : null;

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

form.addEventListener('submit', (event) => {
  event.preventDefault();
  if (current !== null) return;
  const prompt = promptInput.value.trim();
  if (prompt === '') {
    showPromptError('Type a prompt first: a blank prompt is not sent.');
    return;
  }
  showPromptError(null);
  promptInput.value = '';
  start(prompt);
});

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
  const run = current;
  if (run === null) return;
  run.subscription?.unsubscribe();
  if (run.runId !== null) void fetch(cancelUrl(run.runId), { method: 'POST', keepalive: true }).catch(() => undefined);
  run.block.stopped();
  finish('stopped', '■ Stopped');
});

clearButton.addEventListener('click', () => {
  if (current !== null) return;
  transcript.replaceChildren();
  clearButton.disabled = true;
  setStatus('idle', 'Idle');
});

// Closing or reloading the tab: the same cancel, as a beacon (it outlives the page).
window.addEventListener('pagehide', () => {
  const runId = current?.runId ?? null;
  if (runId !== null) navigator.sendBeacon(cancelUrl(runId));
});

function cancelUrl(runId: string): string {
  return `/cancel?run=${encodeURIComponent(runId)}`;
}

function start(prompt: string): void {
  const block = createRunBlock(transcript, prompt);
  const startedAt = performance.now();
  const run: CurrentRun = { subscription: null, block, runId: null };
  current = run;
  setRunning(true);
  setStatus('running', 'Running…');
  const source = resumingEventSource(new EventSource(`/run?prompt=${encodeURIComponent(prompt)}`), {
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

/** One run of the conversation on the page. */
interface RunBlock {
  /** Renders one of the run's messages. */
  show(message: CliMessage): void;
  /** The run ended by itself: its outcome, and tools still running end with it. */
  ended(message: TerminalMessage, outcome: { readonly title: string; readonly detail: string | null }): void;
  /** The page stopped the run. */
  stopped(): void;
}

// Appends a run's block to `root` (its prompt first) and renders the run into it: text as it
// streams, tools as cards, the outcome at the end.
function createRunBlock(root: HTMLElement, prompt: string): RunBlock {
  const block = element('article', 'run');
  block.dataset['state'] = 'running';
  const body = element('div', 'run-body');
  const outcome = element('div', 'outcome');
  outcome.hidden = true;
  block.append(element('div', 'prompt', prompt));
  if (recording !== null) block.append(element('div', 'note replayed', `a recording is played (${recording}): the agent does not read this prompt`));
  block.append(body, outcome);
  root.append(block);
  block.scrollIntoView({ block: 'end' });

  let answer: HTMLElement | null = null; // the text block being written; a tool call starts a new one
  const tools = new Map<string, { card: HTMLElement; state: HTMLElement; output: HTMLElement }>();
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
        answer ??= body.appendChild(element('div', 'assistant'));
        answer.append(message.text); // a delta
        break;
      case 'assistant.withdrawn': {
        // The agent revised text it had streamed: take it back from the end of the answer.
        const shown = answer?.textContent ?? '';
        if (answer !== null && shown.endsWith(message.text)) answer.textContent = shown.slice(0, shown.length - message.text.length);
        break;
      }
      case 'assistant.thought': {
        const details = element('details');
        details.append(element('summary', undefined, 'thinking'), element('pre', undefined, message.text));
        body.append(details);
        answer = null;
        break;
      }
      case 'tool.call': {
        const card = element('div', 'tool');
        const head = element('div', 'tool-head');
        const state = element('span', 'tool-state');
        head.append(element('b', undefined, `▸ ${message.name}`), element('span', 'tool-input', summarize(message.input)), state);
        const output = element('pre');
        card.append(head, output);
        body.append(card);
        const tool = { card, state, output };
        tools.set(message.toolCallId, tool);
        setToolState(tool, 'running');
        answer = null;
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
        answer = null;
        break;
      case 'terminal.completed':
      case 'terminal.failed':
        break; // ended() shows it
    }
  };

  return {
    show,
    ended: (message, { title, detail }) => {
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
    stopped: () => {
      endTools('stopped', '■ stopped with the run');
      end('stopped', '■ Stopped', 'The server ends the agent and its processes.');
    },
  };
}

// A tool's input in one line: its command (pi's bash, Claude Code's Bash, Codex's commands), a lone
// string field as it is, else JSON.
function summarize(input: unknown): string {
  const fields: Readonly<Record<string, unknown>> = typeof input === 'object' && input !== null ? { ...input } : { input };
  const values = Object.values(fields);
  const command = fields['command'];
  const text = typeof command === 'string' ? command : values.length === 1 && typeof values[0] === 'string' ? values[0] : JSON.stringify(input);
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
