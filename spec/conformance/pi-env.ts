/**
 * An isolated pi configuration for one conformance run: a temp root under os.tmpdir() with
 *
 *   <root>/agent/models.json     two providers pointing at the fake model server
 *   <root>/agent/settings.json   retry settings (absent for `retry: 'pi-defaults'`)
 *   <root>/work/notes.txt        the cwd for pi, with the file the `read_tool` scenario reads
 *
 * pi finds its config through PI_CODING_AGENT_DIR, so nothing is read from or written to ~/.pi.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliUnderTest, type CliCommand } from './cli-under-test.js';
import { DEFAULT_MODEL_IDS, NOTES_FILE, NOTES_TXT, REASONING_MODEL_IDS } from './scenarios.js';

/**
 * How to start the pinned pi: the package's bin as npm links it (`node_modules/.bin/pi`, a Node
 * script with a shebang). `AGENT_RX_PI_BIN` names another one (see cli-under-test.ts).
 */
export function piCommand(): CliCommand {
  return cliUnderTest('pi', () => ({ command: fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url)), args: [] }));
}

/** Provider names written into models.json. */
export const OPENAI_PROVIDER = 'fake';
export const ANTHROPIC_PROVIDER = 'fake-anthropic';

/** The API key pi is configured with; the fake server logs what it receives (`RequestLogEntry.apiKey`). */
export const FAKE_API_KEY = 'agent-rx-fake-key';

/**
 * pi has two retry layers: its agent-level auto-retry (`auto_retry_start` events, 2/4/8 s) and the
 * HTTP SDK's own retries (invisible, 2 extra requests per attempt).
 * - 'off': both off; one request per LLM call, errors surface at once.
 * - 'pi-defaults': no settings.json, pi's defaults (an http500 run takes about 20-25 s).
 * - object: explicit values, e.g. `{ agentRetries: 2, baseDelayMs: 100, sdkRetries: 0 }` for fast
 *   auto-retry tests.
 */
export type PiRetry = 'off' | 'pi-defaults' | { readonly agentRetries: number; readonly baseDelayMs: number; readonly sdkRetries: number };

export interface PiEnvOptions {
  /** The fake server's base URL without `/v1`, e.g. `server.baseUrl`. */
  readonly baseUrl: string;
  /** Default 'off'. */
  readonly retry?: PiRetry;
  /** Model ids besides DEFAULT_MODEL_IDS, e.g. `long_text_50000` (unlisted ids make pi warn on stderr). */
  readonly extraModelIds?: readonly string[];
  /** Extra files for the cwd, by relative path. */
  readonly cwdFiles?: Readonly<Record<string, string>>;
}

export interface PiEnv {
  /** Temp root holding everything below; removed by cleanup(). */
  readonly root: string;
  /** PI_CODING_AGENT_DIR. */
  readonly agentDir: string;
  /** Working directory to run pi in (contains notes.txt). */
  readonly cwd: string;
  /** Variables to add to the environment pi runs with. */
  readonly env: Readonly<Record<string, string>>;
  readonly modelIds: readonly string[];
  cleanup(): Promise<void>;
}

export async function createPiEnv(options: PiEnvOptions): Promise<PiEnv> {
  const root = await mkdtemp(join(tmpdir(), 'agent-rx-pi-'));
  const agentDir = join(root, 'agent');
  const cwd = join(root, 'work');
  await mkdir(agentDir, { recursive: true });
  await mkdir(cwd, { recursive: true });

  const modelIds = [...new Set([...DEFAULT_MODEL_IDS, ...(options.extraModelIds ?? [])])];
  // Every model takes images: without `input` pi replaces each image with a note, silently.
  const models = modelIds.map((id) => ({ id, input: ['text', 'image'], ...(REASONING_MODEL_IDS.has(id) ? { reasoning: true } : {}) }));
  const base = options.baseUrl.replace(/\/+$/, '');
  const modelsJson = {
    providers: {
      [OPENAI_PROVIDER]: {
        baseUrl: `${base}/v1`, // pi POSTs to <baseUrl>/chat/completions
        api: 'openai-completions',
        // A literal key. pi would first look up an environment variable of that name, and none exists.
        apiKey: FAKE_API_KEY,
        // Without these pi sends the system prompt as role "developer" and a reasoning_effort to reasoning models.
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models,
      },
      [ANTHROPIC_PROVIDER]: {
        baseUrl: base, // pi appends /v1/messages itself
        api: 'anthropic-messages',
        apiKey: FAKE_API_KEY,
        models,
      },
    },
  };
  await writeFile(join(agentDir, 'models.json'), `${JSON.stringify(modelsJson, null, 2)}\n`);

  const settings = retrySettings(options.retry ?? 'off');
  if (settings !== null) await writeFile(join(agentDir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);

  for (const [path, text] of Object.entries({ [NOTES_FILE]: NOTES_TXT, ...options.cwdFiles })) {
    const file = join(cwd, path);
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, text);
  }

  return {
    root,
    agentDir,
    cwd,
    env: {
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: '1',
      PI_SKIP_VERSION_CHECK: '1',
      PI_TELEMETRY: '0',
    },
    modelIds,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

function retrySettings(retry: PiRetry): Record<string, unknown> | null {
  if (retry === 'pi-defaults') return null;
  if (retry === 'off') return { retry: { enabled: false, provider: { maxRetries: 0 } } };
  return {
    retry: {
      enabled: retry.agentRetries > 0,
      maxRetries: retry.agentRetries,
      baseDelayMs: retry.baseDelayMs,
      provider: { maxRetries: retry.sdkRetries },
    },
  };
}
