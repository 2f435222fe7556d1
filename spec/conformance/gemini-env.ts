/**
 * Running the real Gemini CLI (the pinned devDependency) offline against the fake model server,
 * with nothing read from or written to the real home:
 *
 *   <root>/home   HOME: `.gemini/settings.json` (see `settingsJson`); the CLI keeps its sessions
 *                 (`--resume` needs the same HOME and cwd), history and project state under `.gemini/`
 *   <root>/work   the cwd; runs pass `--skip-trust`, or the CLI stops at once (exit 55) in a folder
 *                 it has not been told to trust
 *   <root>/tmp    TMPDIR: the CLI writes its `gemini-client-error-*.json` reports and a
 *                 `gemini-shell-*` folder per shell command there
 *
 * The CLI authenticates with `GEMINI_API_KEY` (a fake one) and sends every request to
 * `GOOGLE_GEMINI_BASE_URL`, keeping that URL's path: `baseUrlFor(scenario)` picks the scenario.
 * `GEMINI_CLI_NO_RELAUNCH=true` keeps it to one Node process: by default `bundle/gemini.js` is a
 * launcher that starts the real CLI as a second Node process and ignores SIGINT, SIGTERM and SIGHUP
 * itself, without passing them on.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cliUnderTest } from './cli-under-test.js';
import { geminiBaseUrl } from './fake-model-server.js';

/** The API key the CLI is given (`GEMINI_API_KEY`); the fake server logs what it receives (`RequestLogEntry.apiKey`). */
export const GEMINI_FAKE_API_KEY = 'agent-rx-fake-gemini-key';

/**
 * The model the CLI is configured with (`model.name`). It sends it in the URL; the scenario
 * comes from the base URL's path instead, so the CLI keeps a model it knows.
 */
export const GEMINI_MODEL = 'gemini-2.5-pro';

/**
 * How to start the pinned Gemini CLI: `node <@google/gemini-cli>/bundle/gemini.js`, with this
 * Node. The package is a plain JavaScript bundle (its bin); its native parts are optional and
 * not needed. `AGENT_RX_GEMINI_BIN` names another one (see cli-under-test.ts).
 */
export function geminiCommand(): { readonly command: string; readonly args: readonly string[] } {
  return cliUnderTest('gemini', () => {
    const packageJson = createRequire(import.meta.url).resolve('@google/gemini-cli/package.json');
    return { command: process.execPath, args: [join(dirname(packageJson), 'bundle', 'gemini.js')] };
  });
}

export interface GeminiEnvOptions {
  /** The fake server's base URL, e.g. `server.baseUrl`. */
  readonly baseUrl: string;
  /**
   * Puts `GOOGLE_GEMINI_BASE_URL` for this scenario into `env`. Without it the variable points at
   * the server's root, where the CLI's model is unknown (404): set it per run with `baseUrlFor`.
   */
  readonly scenario?: string;
  /**
   * `general.maxAttempts`: requests per model call, the first one included, 1 to 10 (the CLI
   * caps it at 10, its default; 0 would make it send nothing and report success). Default 2: a
   * failing run then makes two requests, 3.5-6.5 s apart (the CLI's back-off starts at 5 s,
   * ±30 % jitter). 1 turns retries off. 'cli-default' leaves the setting out.
   */
  readonly maxAttempts?: number | 'cli-default';
  /**
   * `general.retryFetchErrors`: whether "fetch failed" errors (connection refused, reset) are
   * retried like 5xx answers. Default: left out, the CLI's default (true).
   */
  readonly retryFetchErrors?: boolean;
  /**
   * Leaves Gemini CLI's session cleanup (`general.sessionRetention`) at its default, on. Default:
   * off, so that the CLI's own treatment of resumed sessions (below) cannot fail a spec that is
   * about something else.
   */
  readonly sessionCleanup?: boolean;
}

/*
 * Where else the CLI reads settings from, in rising precedence: built-in defaults, the system
 * defaults file (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, else beside the system settings file), the
 * user file (this env's), the workspace file `<cwd>/.gemini/settings.json` (only in a trusted
 * workspace: it is ignored with `--skip-trust`, read with `GEMINI_CLI_TRUST_WORKSPACE=true`), and
 * the system settings file (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else `/etc/gemini-cli/settings.json`),
 * which overrides all others. Both system files are skipped, with a "Security Warning" on stderr,
 * unless the file and every folder above it are owned by root and not writable by group or others
 * (so never under /tmp). The env clears both variables.
 */

export interface GeminiEnv {
  /** Temp root holding everything below; removed by cleanup(). */
  readonly root: string;
  readonly home: string;
  /** `<home>/.gemini/settings.json`. */
  readonly settingsPath: string;
  /** Working directory to run the CLI in. */
  readonly cwd: string;
  /** TMPDIR. */
  readonly tmp: string;
  /** Variables to merge over `process.env` (`undefined` removes one the host might have set). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `GOOGLE_GEMINI_BASE_URL` for `scenario` on this env's server. */
  baseUrlFor(scenario: string): string;
  cleanup(): Promise<void>;
}

/** A fresh HOME, cwd and temp dir for Gemini CLI runs. Reuse one for `--resume`. */
export function createGeminiEnv(options: GeminiEnvOptions): GeminiEnv {
  const { maxAttempts } = options;
  if (typeof maxAttempts === 'number' && !(Number.isInteger(maxAttempts) && maxAttempts >= 1 && maxAttempts <= 10)) {
    throw new RangeError(`maxAttempts must be an integer from 1 to 10, not ${maxAttempts}`);
  }
  const root = mkdtempSync(join(tmpdir(), 'agent-rx-gemini-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const tmp = join(root, 'tmp');
  const settingsDir = join(home, '.gemini');
  for (const dir of [home, settingsDir, cwd, tmp]) mkdirSync(dir);
  const settingsPath = join(settingsDir, 'settings.json');
  writeFileSync(settingsPath, `${JSON.stringify(settingsJson(options), null, 2)}\n`);
  const baseUrlFor = (scenario: string): string => geminiBaseUrl(options.baseUrl, scenario);
  return {
    root,
    home,
    settingsPath,
    cwd,
    tmp,
    env: {
      HOME: home,
      TMPDIR: tmp,
      GEMINI_API_KEY: GEMINI_FAKE_API_KEY,
      GOOGLE_GEMINI_BASE_URL: options.scenario === undefined ? options.baseUrl.replace(/\/+$/, '') : baseUrlFor(options.scenario),
      GEMINI_CLI_NO_RELAUNCH: 'true',
      // Host settings that would send the CLI elsewhere, authenticate it another way, or read
      // configuration and state from outside the root.
      GEMINI_CLI_HOME: undefined,
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: undefined,
      GEMINI_CLI_SYSTEM_DEFAULTS_PATH: undefined,
      GEMINI_CLI_TRUSTED_FOLDERS_PATH: undefined,
      GEMINI_CLI_CUSTOM_HEADERS: undefined,
      GEMINI_CLI_USE_COMPUTE_ADC: undefined,
      GEMINI_CLI_IDE_SERVER_PORT: undefined,
      GEMINI_CLI_IDE_WORKSPACE_PATH: undefined,
      GEMINI_CLI_IDE_AUTH_TOKEN: undefined,
      GEMINI_API_KEY_AUTH_MECHANISM: undefined,
      GEMINI_MODEL: undefined,
      GEMINI_SYSTEM_MD: undefined,
      GEMINI_WRITE_SYSTEM_MD: undefined,
      GEMINI_SANDBOX: undefined,
      SANDBOX: undefined,
      GOOGLE_API_KEY: undefined,
      GOOGLE_APPLICATION_CREDENTIALS: undefined,
      GOOGLE_CLOUD_PROJECT: undefined,
      GOOGLE_CLOUD_PROJECT_ID: undefined,
      GOOGLE_CLOUD_LOCATION: undefined,
      GOOGLE_CLOUD_ACCESS_TOKEN: undefined,
      GOOGLE_GENAI_USE_VERTEXAI: undefined,
      GOOGLE_GENAI_USE_GCA: undefined,
      GOOGLE_GENAI_API_VERSION: undefined,
      GOOGLE_VERTEX_BASE_URL: undefined,
      CODE_ASSIST_ENDPOINT: undefined,
      CLOUD_SHELL: undefined,
      // `true` in either makes the CLI take every run as headless (and never open a browser):
      // cleared so that runs behave the same on a CI machine as elsewhere.
      CI: undefined,
      GITHUB_ACTIONS: undefined,
      DEBUG: undefined,
      DEBUG_MODE: undefined,
      HTTP_PROXY: undefined,
      HTTPS_PROXY: undefined,
      NO_PROXY: undefined,
      http_proxy: undefined,
      https_proxy: undefined,
      no_proxy: undefined,
    },
    baseUrlFor,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * The user settings: API-key auth with the fixed model, no update checks, usage statistics or
 * telemetry, short retries (see `GeminiEnvOptions.maxAttempts`), and no `.env` file read from the
 * folders above the cwd (the CLI looks for one up to `/`; the home's would still be read).
 */
function settingsJson(options: GeminiEnvOptions): Record<string, unknown> {
  const maxAttempts = options.maxAttempts ?? 2;
  return {
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      // Gemini CLI 0.61's session cleanup, run at each start, deletes a session that was resumed
      // in a later minute than it was started in (the resume leaves an empty file of that
      // session named for the new minute, and cleanup removes every file of a session that has
      // an empty one). runGemini removes that file after a resume; the spec that shows it turns
      // cleanup on, the others leave it off.
      ...(options.sessionCleanup === true ? {} : { sessionRetention: { enabled: false } }),
      ...(maxAttempts === 'cli-default' ? {} : { maxAttempts }),
      ...(options.retryFetchErrors === undefined ? {} : { retryFetchErrors: options.retryFetchErrors }),
    },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    security: { auth: { selectedType: 'gemini-api-key' } },
    model: { name: GEMINI_MODEL },
    advanced: { ignoreLocalEnv: true },
  };
}
