import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { folderStore, type PiSessionOptions, type RunPiOptions } from '../../lib/index.js';

/** The bundled stand-ins for pi: one run per process (`--mode json`), and many turns on one process (`--mode rpc`). */
export const REPLAY_SCRIPT = fileURLToPath(new URL('../replay-agent/pi-replay.mjs', import.meta.url));
export const RPC_REPLAY_SCRIPT = fileURLToPath(new URL('../replay-agent/pi-rpc-replay.mjs', import.meta.url));
const TRANSCRIPTS = fileURLToPath(new URL('../replay-agent/transcripts/', import.meta.url));

/** The recorded run replayed when no --transcript is given: a tool call between two bits of text. */
export const DEFAULT_TRANSCRIPT = 'tool_call_then_text';

export const USAGE = `usage: npx tsx examples/nest/main.ts [options]

A NestJS app that runs pi through agent-rx and serves it as server-sent events, on 127.0.0.1:
  GET    /api/agent/run?prompt=…         one run, streamed (the client leaving stops the agent)
  GET    /api/agent/session/<id>         a session (one agent process, many turns), streamed
  POST   /api/agent/session/<id>/prompt  {"text": "…"}: a turn (queued while one runs)
  POST   /api/agent/session/<id>/abort   ends the running turn; the process stays
  DELETE /api/agent/session/<id>         ends the session after its running turn
By default pi is a bundled replay of a recorded run (offline, no API key, no pi needed).

  --port <n>            port on 127.0.0.1 (also: PORT; default: any free port)
  --transcript <name>   which recorded pi run to replay (examples/replay-agent/transcripts/<name>.jsonl;
                        default ${DEFAULT_TRANSCRIPT})
  --real                run the real \`pi\` on PATH instead
  --provider <name>     passed to pi, with --real
  --model <id>          passed to pi, with --real
  --conversations <dir> with --real: each session id's conversation is kept in this folder (after
                        every turn, and when its pi falls asleep), so that the session opened again
                        under the same id, after a restart of the app too, goes on with it
  --idle-ms <n>         with --conversations: how long a session's pi stays without a turn before
                        it falls asleep (its process ends; the next prompt wakes it). Default 60000
  -h, --help            this text
`;

/** Which pi the app runs: the bundled replay of a recorded run, or the real one. */
export type PiChoice =
  | { readonly kind: 'replay'; readonly transcript: string }
  | {
      readonly kind: 'real';
      readonly provider?: string;
      readonly model?: string;
      /** The folder of the sessions' conversations (a snapshot per session id). */
      readonly conversations?: string;
      /** How long a session's pi stays without a turn before it falls asleep. */
      readonly idleMs?: number;
    };

export type NestRequest =
  | { readonly kind: 'serve'; readonly port: number; readonly pi: PiChoice }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Reads the command line and the environment; never throws on bad input.
export function parseNestArgs(argv: readonly string[], env: NodeJS.ProcessEnv): NestRequest {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        transcript: { type: 'string' },
        real: { type: 'boolean' },
        provider: { type: 'string' },
        model: { type: 'string' },
        conversations: { type: 'string' },
        'idle-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help === true) return { kind: 'help' };
  const portText = values.port ?? env['PORT'] ?? '0';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) return { kind: 'usage-error', message: `--port must be a port number, got '${portText}'` };
  const idleText = values['idle-ms'];
  if (idleText !== undefined && (!/^\d+$/.test(idleText) || Number(idleText) < 1)) return { kind: 'usage-error', message: `--idle-ms must be a number of milliseconds, got '${idleText}'` };
  if (idleText !== undefined && values.conversations === undefined) return { kind: 'usage-error', message: '--idle-ms goes with --conversations' };
  if (values.conversations === '') return { kind: 'usage-error', message: '--conversations must be a folder' };
  if (values.real !== true) {
    if (values.provider !== undefined || values.model !== undefined) return { kind: 'usage-error', message: '--provider and --model are for the real pi: add --real' };
    if (values.conversations !== undefined) return { kind: 'usage-error', message: "--conversations is for the real pi (add --real): a replay has no conversation of its own to keep" };
    const transcript = values.transcript ?? DEFAULT_TRANSCRIPT;
    // pi's recordings only: the others are another agent's output.
    if (!/^[\w.-]+$/.test(transcript) || /^(?:claude|codex|gemini)-/.test(transcript) || !existsSync(`${TRANSCRIPTS}${transcript}.jsonl`)) {
      return { kind: 'usage-error', message: `--transcript must name a recorded pi run in examples/replay-agent/transcripts; got '${transcript}'` };
    }
    return { kind: 'serve', port, pi: { kind: 'replay', transcript } };
  }
  if (values.transcript !== undefined) return { kind: 'usage-error', message: '--transcript picks a replay; it does not go with --real' };
  const pi = {
    kind: 'real' as const,
    ...(values.provider === undefined ? {} : { provider: values.provider }),
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.conversations === undefined ? {} : { conversations: values.conversations }),
    ...(idleText === undefined ? {} : { idleMs: Number(idleText) }),
  };
  return { kind: 'serve', port, pi };
}

// The options of one run: Node running the replay script (a transcript is a "model"), or pi.
export function runOptionsFor(pi: PiChoice, prompt: string): RunPiOptions {
  return { prompt, ...piOptionsFor(pi, REPLAY_SCRIPT) };
}

// The options of one session: Node running the rpc replay script, or pi.
export function sessionOptionsFor(pi: PiChoice): PiSessionOptions {
  return piOptionsFor(pi, RPC_REPLAY_SCRIPT);
}

/** The default `idleMs` of a session whose conversation is kept. */
export const DEFAULT_IDLE_MS = 60_000;

/**
 * What keeps the session `id`'s conversation: its snapshot in the `--conversations` folder under
 * that id, taken after every turn and when its pi falls asleep after `idleMs`; a session opened
 * again under the id resumes it. Nothing without `--conversations`.
 */
export function conversationOptionsFor(pi: PiChoice, id: string): Pick<PiSessionOptions, 'idleMs' | 'conversationId' | 'store'> {
  if (pi.kind === 'replay' || pi.conversations === undefined) return {};
  return { idleMs: pi.idleMs ?? DEFAULT_IDLE_MS, conversationId: id, store: folderStore(pi.conversations) };
}

function piOptionsFor(pi: PiChoice, replayScript: string): Omit<PiSessionOptions, 'permission' | 'permissionTimeoutMs'> {
  if (pi.kind === 'replay') return { executable: process.execPath, executableArgs: [replayScript], model: pi.transcript };
  return {
    ...(pi.provider === undefined ? {} : { provider: pi.provider }),
    ...(pi.model === undefined ? {} : { model: pi.model }),
  };
}

// One line saying which pi runs, for the console.
export function describePi(pi: PiChoice): string {
  if (pi.kind === 'replay') return `replay of a recorded pi run: ${pi.transcript} (offline; --real runs pi)`;
  const model = [pi.provider, pi.model].filter((part) => part !== undefined).join('/');
  const kept = pi.conversations === undefined ? '' : ` · conversations kept in ${pi.conversations}`;
  return `pi${model === '' ? '' : ` (${model})`}${kept}`;
}
