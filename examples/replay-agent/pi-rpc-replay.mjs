#!/usr/bin/env node
// A stand-in for `pi --mode rpc` that needs no network, no API key and no pi: one process, many
// turns. Each `prompt` replays a recorded pi 0.73.1 run (transcripts/<--model>.jsonl, default
// tool_call_then_text) as that turn, with the prompt as its user message, at the pace of
// pi-replay.mjs ($PI_REPLAY_STARTUP_MS, default 400; $PI_REPLAY_SPEED multiplies every delay,
// default 1, 0 = no delays). The offline session agent of `agent-rx chat` and `agent-rx acp`
// (`--executable examples/replay-agent/pi-rpc-replay.mjs`), the web example's `--session` and the
// Nest example's sessions.
//
//   pi-rpc-replay.mjs --mode rpc --model <transcript name> [pi flags...]
//
// Commands (one JSON object per LF line on stdin), answered as pi answers them:
//   {"id","type":"get_state"}                 → a response with data.sessionId
//   {"id","type":"prompt","message"}           idle: a turn; busy: refused, unless
//                                              streamingBehavior is "steer" (echoed into the turn)
//   {"id","type":"abort"}                      ends the running turn (stopReason "aborted"), then the response
// The end of stdin exits 0 (a running turn dies with it, as in pi). SIGTERM exits 143.
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { delayBefore } from './pacing.mjs';

const TRANSCRIPTS = fileURLToPath(new URL('./transcripts/', import.meta.url));
const DEFAULT_TRANSCRIPT = 'tool_call_then_text';

process.on('SIGTERM', () => process.exit(143));
process.on('SIGHUP', () => process.exit(129));
process.stdout.on('error', () => process.exit(1));

const model = valueOf(process.argv.slice(2), '--model') ?? DEFAULT_TRANSCRIPT;
const path = `${TRANSCRIPTS}${model}.jsonl`;
if (!/^[\w.-]+$/.test(model) || /^(claude|codex|gemini)-/.test(model) || !existsSync(path)) {
  process.stderr.write(`pi-rpc-replay: no pi transcript named '${model}'\n`);
  process.exit(1);
}
// The recorded events of one run, its session header left out (rpc mode prints none).
const recorded = readFileSync(path, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line))
  .filter((event) => event.type !== 'session');
const speed = numberFromEnv('PI_REPLAY_SPEED', 1);
const sessionId = randomUUID();

let turns = 0;
const recordedStart = recorded.find((event) => typeof event.message?.timestamp === 'number')?.message.timestamp ?? 0;

/** The running turn: its timer, the events still to come, and the assistant message open in it. */
let turn = null;
const startup = new Promise((resolve) => setTimeout(resolve, numberFromEnv('PI_REPLAY_STARTUP_MS', 400) * speed));
let pending = '';
let chain = Promise.resolve();

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let newline = pending.indexOf('\n');
  while (newline !== -1) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    if (line.trim() !== '') chain = chain.then(() => startup).then(() => handle(line));
    newline = pending.indexOf('\n');
  }
});
process.stdin.on('end', () => {
  void chain.then(() => process.exit(0));
});

function handle(line) {
  let command;
  try {
    command = JSON.parse(line);
  } catch (error) {
    out({ type: 'response', command: 'parse', success: false, error: `Failed to parse command: ${error.message}` });
    return;
  }
  const id = command.id === undefined ? {} : { id: command.id };
  switch (command.type) {
    case 'get_state':
      out({ ...id, type: 'response', command: 'get_state', success: true, data: { sessionId, isStreaming: turn !== null, messageCount: 0, pendingMessageCount: 0 } });
      return;
    case 'prompt': {
      const text = String(command.message ?? '');
      if (turn !== null && command.streamingBehavior !== 'steer') {
        out({ ...id, type: 'response', command: 'prompt', success: false, error: 'Agent is already processing. Specify streamingBehavior' });
        return;
      }
      out({ ...id, type: 'response', command: 'prompt', success: true });
      if (turn === null) startTurn(text);
      else echoUser(text);
      return;
    }
    case 'abort':
      if (turn !== null) abortTurn();
      out({ ...id, type: 'response', command: 'abort', success: true });
      return;
    default:
      out({ type: 'response', command: String(command.type), success: false, error: `Unknown command: ${String(command.type)}` });
  }
}

// Replays the recording as a turn: its first user message is this prompt, and its messages are
// new ones (each turn's own timestamps and response ids, as pi's are).
function startTurn(prompt) {
  turns += 1;
  const shift = Date.now() - recordedStart;
  let promptSeen = false;
  const events = recorded.map((recordedEvent) => {
    const event = renew(recordedEvent, shift, turns);
    if (promptSeen || event.message?.role !== 'user') return event;
    if (event.type === 'message_end') promptSeen = true;
    return { ...event, message: { ...event.message, content: [{ type: 'text', text: prompt }] } };
  });
  turn = { events, timer: null, open: null };
  next(null);
}

function next(previous) {
  const current = turn;
  if (current === null) return;
  const event = current.events.shift();
  if (event === undefined) {
    turn = null;
    return;
  }
  current.timer = setTimeout(() => {
    current.timer = null;
    if (event.type === 'message_start' && event.message?.role === 'assistant') current.open = event.message;
    if (event.type === 'message_update') current.open = event.assistantMessageEvent?.partial ?? current.open;
    if (event.type === 'message_end') current.open = null;
    out(event);
    next(event);
  }, delayBefore(event, previous) * speed);
}

// Ends the turn as pi does on an abort: the open message (or an empty one) ends "aborted", then the run.
function abortTurn() {
  const current = turn;
  turn = null;
  if (current.timer !== null) clearTimeout(current.timer);
  const message = { role: 'assistant', content: [], ...(current.open ?? {}), stopReason: 'aborted', errorMessage: 'Request was aborted' };
  if (current.open === null) out({ type: 'message_start', message });
  out({ type: 'message_end', message });
  out({ type: 'turn_end', message, toolResults: [] });
  out({ type: 'agent_end', messages: [message] });
}

// A copy of a recorded value with its messages' timestamps moved to now and response ids made the turn's own.
function renew(value, shift, turn) {
  if (Array.isArray(value)) return value.map((item) => renew(item, shift, turn));
  if (value === null || typeof value !== 'object') return value;
  const copy = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === 'timestamp' && typeof item === 'number') copy[key] = item + shift;
    else if (key === 'responseId' && typeof item === 'string') copy[key] = `${item}-${turn}`;
    else copy[key] = renew(item, shift, turn);
  }
  return copy;
}

// A steer, taken into the running turn: pi echoes it as a user message.
function echoUser(text) {
  const message = { role: 'user', content: [{ type: 'text', text }], timestamp: Date.now() };
  out({ type: 'message_start', message });
  out({ type: 'message_end', message });
}


function out(event) {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

function valueOf(args, flag) {
  const at = args.indexOf(flag);
  if (at !== -1) return args[at + 1];
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

function numberFromEnv(name, fallback) {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && process.env[name] !== '' && Number.isFinite(value) && value >= 0 ? value : fallback;
}
