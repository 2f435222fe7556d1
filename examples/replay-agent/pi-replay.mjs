#!/usr/bin/env node
// A stand-in for `pi --mode json` that needs no network, no API key and no pi: it reads stdin to
// EOF like pi, then replays a recorded pi 0.73.1 transcript to stdout at a believable pace. It
// replays Claude Code recordings (`claude-*` transcripts) and Codex recordings (`codex-*`, run as
// `pi-replay.mjs exec --experimental-json --model <name> ...`), Gemini CLI recordings (`gemini-*`,
// run as `pi-replay.mjs --output-format stream-json --model=<name> ...`) and Qwen Code recordings
// (`qwen-*`, whose prompt is one argument `--prompt=<text>`) the same way.
//
//   pi-replay.mjs --mode json [--provider P] --model <transcript name> [pi flags...] [prompt]
//
// Transcript: $PI_REPLAY_TRANSCRIPT (a .jsonl path), else transcripts/<--model>.jsonl, else
// transcripts/tool_call_then_text.jsonl. Pacing: a startup delay ($PI_REPLAY_STARTUP_MS, default
// 400), streamed deltas 20-60 ms apart, tools and model calls a little slower, the rest at once;
// $PI_REPLAY_SPEED multiplies every delay (default 1; 0 = no delays, 0.5 = twice as fast).
// Signals as pi: SIGTERM exits 143, SIGHUP 129, SIGINT kills it. The exit code is the recorded one.
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { delayBefore } from './pacing.mjs';

const TRANSCRIPTS = fileURLToPath(new URL('./transcripts/', import.meta.url));
const DEFAULT_TRANSCRIPT = 'tool_call_then_text';
// pi flags that take a value; the rest of the `-` arguments are switches, anything else is prompt.
const VALUE_FLAGS = new Set([
  '--mode', '--provider', '--model', '--thinking', '--session', '--session-dir', '--tools',
  '--system-prompt', '--append-system-prompt', '--api-key', '--models', '--export',
  // Codex's
  '-c', '--config', '-m', '-s', '--sandbox', '--add-dir', '-C', '--cd',
  // Gemini CLI's
  '--output-format',
]);

process.on('SIGTERM', () => process.exit(143));
process.on('SIGHUP', () => process.exit(129));
process.stdout.on('error', () => process.exit(1));

const { flags, prompt: argPrompt } = parseArgs(process.argv.slice(2));
if (flags.has('--help') || flags.has('-h')) {
  process.stdout.write(`usage: pi-replay.mjs --mode json --model <${availableNames().join('|')}> [prompt]\n`);
  process.exit(0);
}
const source = chooseTranscript(flags.get('--model'));
if (source === null) {
  process.stderr.write(`pi-replay: no transcript named '${flags.get('--model')}' (have: ${availableNames().join(', ')})\n`);
  process.exit(1);
}
const promptFlag = flags.get('--prompt');
const prompt = (await readStdin()).trim() + argPrompt + (typeof promptFlag === 'string' ? promptFlag : '');
const meta = readMeta(source);
if (meta.stderr) process.stderr.write(meta.stderr);
const speed = numberFromEnv('PI_REPLAY_SPEED', 1);
await sleep(numberFromEnv('PI_REPLAY_STARTUP_MS', 400) * speed);
const lines = splitLines(readFileSync(source, 'utf8'));
// pi with no prompt at all prints only its session header.
await replay(prompt === '' ? lines.slice(0, 1) : lines, speed);
finish(meta);

// Splits argv into flags (value or `true`) and the prompt words.
function parseArgs(args) {
  const flags = new Map();
  const words = [];
  // Codex's subcommand.
  for (let i = args[0] === 'exec' ? 1 : 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--') {
      words.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') words.push(arg);
    else if (arg.includes('=')) flags.set(arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1));
    else if (VALUE_FLAGS.has(arg)) flags.set(arg, args[(i += 1)] ?? '');
    else flags.set(arg, true);
  }
  return { flags, prompt: words.join(' ') };
}

function availableNames() {
  return readdirSync(TRANSCRIPTS)
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => name.slice(0, -'.jsonl'.length))
    .sort();
}

// The env path wins, then a model named like a transcript; null when the model names none.
function chooseTranscript(model) {
  if (process.env.PI_REPLAY_TRANSCRIPT) return process.env.PI_REPLAY_TRANSCRIPT;
  if (typeof model !== 'string' || model === '') return `${TRANSCRIPTS}${DEFAULT_TRANSCRIPT}.jsonl`;
  return /^[\w.-]+$/.test(model) && availableNames().includes(model) ? `${TRANSCRIPTS}${model}.jsonl` : null;
}

// Like pi: a piped stdin is read to EOF before anything happens; a terminal is not read.
async function readStdin() {
  if (process.stdin.isTTY) return '';
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

// The recorded exit and stderr from `<name>.meta.json` next to the transcript, when there is one.
function readMeta(transcript) {
  const path = transcript.replace(/\.jsonl$/, '') + '.meta.json';
  if (!existsSync(path)) return { exitCode: 0, signal: null, stderr: '' };
  const meta = JSON.parse(readFileSync(path, 'utf8'));
  // pi recordings say `exitCode`, Claude Code recordings `exit_code`.
  return { exitCode: meta.exitCode ?? meta.exit_code ?? 0, signal: meta.signal ?? null, stderr: meta.stderr ?? '' };
}

function numberFromEnv(name, fallback) {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && process.env[name] !== '' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

// Lines with their own terminators, so the output is the transcript byte for byte.
function splitLines(text) {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

async function replay(lines, speed) {
  let previous = null;
  for (const line of lines) {
    const event = parseEvent(line);
    const delay = delayBefore(event, previous) * speed;
    if (delay > 0) await sleep(delay);
    if (!process.stdout.write(line)) await once(process.stdout, 'drain');
    previous = event;
  }
}

function parseEvent(line) {
  try {
    const value = JSON.parse(line);
    return value !== null && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
}


// Ends the way the recorded run ended: its exit code, or death by its signal.
function finish({ exitCode, signal }) {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exitCode = exitCode;
}
