// The page's script (bundled by server.ts for the browser): runs the prompt on the server and shows
// the run as it streams in, with agent-rx/browser as an app would use it (here from the source).
// A server with a fleet sends resumable streams (resumable.ts): the EventSource is then left to
// reconnect after a drop, the run goes on where it stopped, and Stop cancels it by its id.
import type { Subscription } from 'rxjs';
import { fromAgentEventSource, isTerminal, type CliMessage, type TerminalMessage } from '../../lib/browser.js';
import { resumingEventSource } from './resumable.js';

const form = byId('run-form', HTMLFormElement);
const promptInput = byId('prompt', HTMLTextAreaElement);
const runButton = byId('run', HTMLButtonElement);
const stopButton = byId('stop', HTMLButtonElement);
const status = byId('status', HTMLElement);
const transcript = byId('transcript', HTMLElement);

let current: Subscription | null = null;
// The fleet's id of the current run, once its stream said it (a server without a fleet sends none).
let currentRun: string | null = null;

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const prompt = promptInput.value.trim();
  if (prompt !== '' && current === null) start(prompt);
});

// Unsubscribing closes the EventSource; the server sees its client leave and stops the agent. A
// fleet's run outlives a closed stream for a while (it may reconnect): it is cancelled by its id.
stopButton.addEventListener('click', () => {
  const runId = currentRun;
  current?.unsubscribe();
  if (runId !== null) void fetch(cancelUrl(runId), { method: 'POST', keepalive: true }).catch(() => undefined);
  finish('stopped', 'Stopped · the server ends the agent and its processes');
});

// Closing or reloading the tab: the same cancel, as a beacon (it outlives the page).
window.addEventListener('pagehide', () => {
  if (current !== null && currentRun !== null) navigator.sendBeacon(cancelUrl(currentRun));
});

function cancelUrl(runId: string): string {
  return `/cancel?run=${encodeURIComponent(runId)}`;
}

function start(prompt: string): void {
  const show = createView(transcript);
  const startedAt = performance.now();
  setRunning(true);
  setStatus('running', 'Running…');
  currentRun = null;
  const source = resumingEventSource(new EventSource(`/run?prompt=${encodeURIComponent(prompt)}`), {
    onRun: ({ runId }) => {
      currentRun = runId;
    },
  });
  const subscription = fromAgentEventSource(source).subscribe((message) => {
    show(message);
    if (isTerminal(message)) finish(message.type === 'terminal.completed' ? 'completed' : 'failed', describeEnd(message, performance.now() - startedAt));
  });
  current = subscription.closed ? null : subscription;
}

function finish(state: 'completed' | 'failed' | 'stopped', text: string): void {
  current = null;
  currentRun = null;
  setRunning(false);
  setStatus(state, text);
}

function setRunning(running: boolean): void {
  runButton.disabled = running;
  stopButton.disabled = !running;
  promptInput.readOnly = running;
}

function setStatus(state: string, text: string): void {
  status.dataset['state'] = state;
  status.textContent = text;
}

function describeEnd(message: TerminalMessage, elapsedMs: number): string {
  const seconds = `${(elapsedMs / 1000).toFixed(1)} s`;
  if (message.type === 'terminal.failed') return `✗ Failed · ${message.reason}: ${message.message}`;
  const tokens = message.usage === undefined ? '' : ` · ${message.usage.totalTokens} tokens`;
  const reason = message.stopReason === 'end_turn' ? '' : ` · ${message.stopReason}`;
  return `✓ Completed${reason}${tokens} · ${seconds}`;
}

// Renders messages into `root`, which it empties first: text as it streams, tools as cards.
function createView(root: HTMLElement): (message: CliMessage) => void {
  root.replaceChildren();
  let answer: HTMLElement | null = null; // the text block being written; a tool call starts a new one
  const tools = new Map<string, { card: HTMLElement; output: HTMLElement }>();
  return (message) => {
    switch (message.type) {
      case 'session.started':
      case 'session.resumed':
        root.append(element('div', 'note', `session ${message.sessionId}`));
        break;
      case 'assistant':
        answer ??= root.appendChild(element('div', 'assistant'));
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
        root.append(details);
        answer = null;
        break;
      }
      case 'tool.call': {
        const card = element('div', 'tool');
        const head = element('div', 'tool-head');
        head.append(element('b', undefined, `▸ ${message.name}`), summarize(message.input));
        const output = element('pre');
        card.append(head, output);
        root.append(card);
        tools.set(message.toolCallId, { card, output });
        answer = null;
        break;
      }
      case 'tool.update':
      case 'tool.completed':
      case 'tool.failed': {
        const tool = tools.get(message.toolCallId);
        if (tool === undefined) break;
        tool.output.textContent = message.output; // each update replaces the previous one
        if (message.type !== 'tool.update') tool.card.dataset['state'] = message.type === 'tool.completed' ? 'completed' : 'failed';
        break;
      }
      case 'agent.retry':
        root.append(
          element(
            'div',
            'note',
            `the agent retries${message.attempt === undefined ? '' : ` (attempt ${message.attempt}${message.maxAttempts === undefined ? '' : ` of ${message.maxAttempts}`})`}${message.delayMs === undefined ? '' : ` in ${message.delayMs} ms`}: ${message.reason}`,
          ),
        );
        break;
      case 'agent.warning':
        root.append(element('div', 'note', `the agent warns: ${message.message}`));
        break;
      case 'run.retrying':
        root.replaceChildren(element('div', 'note', `attempt ${message.attempt} in ${message.delayMs} ms, after: ${message.failure.message}`));
        answer = null;
        break;
      case 'terminal.completed':
      case 'terminal.failed':
        break; // the status line shows it
    }
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
