/**
 * Running the real Codex CLI (the pinned devDependency) offline against the fake model server,
 * with nothing read from or written to the real home:
 *
 *   <root>/home        HOME, left empty: Codex runs commands (and its start-up shell snapshot) in
 *                      login shells, which would source the user's profile and bashrc
 *   <root>/codex-home  CODEX_HOME: config.toml (see `configToml`); Codex keeps its sessions here
 *                      (`exec resume <thread id>` needs the same CODEX_HOME), plus its state and skills
 *   <root>/work        the cwd; not a git repository, so runs pass `--skip-git-repo-check`
 *   <root>/tmp         TMPDIR
 *
 * The scenario is picked by the provider's base URL, given per run as a `-c` override (see
 * `codexBaseUrlOverride`): Codex sends the configured model slug, which stays one it knows.
 * TMPDIR is set to a folder beside CODEX_HOME, not above it: Codex refuses to put its PATH helper
 * aliases (`codex-home/tmp/arg0-*`) under the temp dir, with a warning on stderr.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { scenarioBaseUrl } from './fake-model-server.js';

/** The environment variable the fake provider reads its API key from (its `env_key`). */
export const CODEX_FAKE_API_KEY_VAR = 'AGENT_RX_FAKE_CODEX_KEY';
/** The API key the CLI is given; the fake server logs what it receives (`RequestLogEntry.apiKey`). */
export const CODEX_FAKE_API_KEY = 'agent-rx-fake-codex-key';
/** The provider name in config.toml. */
export const CODEX_FAKE_PROVIDER = 'fake';
/**
 * The model slug Codex is configured with. It must be one Codex 0.171.0 has metadata for: an
 * unknown slug adds an `error` item ("Model metadata for ... not found") to every run.
 */
export const CODEX_MODEL = 'gpt-5.5';

/** Rust target triples of the native binaries, by Node's `<platform>-<arch>` (as `@openai/codex`'s launcher maps them). */
const TARGET_TRIPLES: Readonly<Record<string, string>> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

/**
 * The pinned Codex CLI's native binary.
 *
 * `@openai/codex`'s bin is a Node launcher; on Node 20 (no `process.execve`) it spawns the binary
 * as a child and forwards only SIGINT, SIGTERM and SIGHUP, so a SIGKILL to it orphans Codex and
 * its commands. The binary comes from the optional dependency `@openai/codex-<platform>-<arch>`
 * (resolved from `@openai/codex`, whose dependency it is) at `vendor/<target triple>/bin/codex`;
 * `@openai/codex-sdk` runs the same file.
 */
export function codexExecutable(): string {
  const platform = `${process.platform}-${process.arch}`;
  const triple = TARGET_TRIPLES[platform];
  if (triple === undefined) throw new Error(`Codex has no native binary for ${platform}`);
  const codexPackage = createRequire(import.meta.url).resolve('@openai/codex/package.json');
  const platformPackage = `@openai/codex-${platform}`;
  let packageDir: string;
  try {
    packageDir = dirname(createRequire(codexPackage).resolve(`${platformPackage}/package.json`));
  } catch {
    throw new Error(`Codex's native binary is missing: ${platformPackage} is not installed (npm ci with optional dependencies?)`);
  }
  const binary = join(packageDir, 'vendor', triple, 'bin', process.platform === 'win32' ? 'codex.exe' : 'codex');
  if (!existsSync(binary)) throw new Error(`Codex's native binary is missing: no ${binary}`);
  return binary;
}

/**
 * The value of the `-c` argument that points the fake provider at `scenario` on the fake server:
 * `model_providers.fake.base_url="http://127.0.0.1:PORT/s/<scenario>/v1"` (Codex POSTs to
 * `<base_url>/responses`). `server` is the fake server, or anything with its `baseUrl`.
 */
export function codexBaseUrlOverride(server: { readonly baseUrl: string }, scenario: string): string {
  return `model_providers.${CODEX_FAKE_PROVIDER}.base_url=${JSON.stringify(scenarioBaseUrl(server.baseUrl, scenario))}`;
}

export interface CodexEnvOptions {
  /** The fake server's base URL, e.g. `server.baseUrl`, for `baseUrlOverride`. */
  readonly baseUrl: string;
  /** The provider's `request_max_retries` (failed HTTP requests). Default 1; Codex's own default is 4. */
  readonly requestMaxRetries?: number;
  /** The provider's `stream_max_retries` (streams that break or stall). Default 1; Codex's own default is 5. */
  readonly streamMaxRetries?: number;
  /**
   * The provider's `stream_idle_timeout_ms`: how long a silent stream is waited for before it
   * counts as broken (and is retried). Default: Codex's own (300000, five minutes).
   */
  readonly streamIdleTimeoutMs?: number;
}

export interface CodexEnv {
  /** Temp root holding everything below; removed by cleanup(). */
  readonly root: string;
  readonly home: string;
  /** CODEX_HOME, holding config.toml. */
  readonly codexHome: string;
  /** Working directory to run the CLI in. */
  readonly cwd: string;
  /** Variables to merge over `process.env` (`undefined` removes one the host might have set). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `codexBaseUrlOverride` for this env's server. */
  baseUrlOverride(scenario: string): string;
  cleanup(): Promise<void>;
}

/** A fresh HOME, CODEX_HOME, cwd and temp dir for Codex runs. Reuse one for `exec resume`. */
export function createCodexEnv(options: CodexEnvOptions): CodexEnv {
  const root = mkdtempSync(join(tmpdir(), 'agent-rx-codex-'));
  const home = join(root, 'home');
  const codexHome = join(root, 'codex-home');
  const cwd = join(root, 'work');
  const tmp = join(root, 'tmp');
  for (const dir of [home, codexHome, cwd, tmp]) mkdirSync(dir);
  writeFileSync(join(codexHome, 'config.toml'), configToml(options));
  return {
    root,
    home,
    codexHome,
    cwd,
    env: {
      HOME: home,
      TMPDIR: tmp,
      CODEX_HOME: codexHome,
      [CODEX_FAKE_API_KEY_VAR]: CODEX_FAKE_API_KEY,
      // Tracing goes to stderr; `info` and below add many lines per run.
      RUST_LOG: 'warn',
      // Host settings that would send the CLI elsewhere, authenticate it or move its state.
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      OPENAI_ORGANIZATION: undefined,
      OPENAI_PROJECT: undefined,
      CODEX_API_KEY: undefined,
      CODEX_ACCESS_TOKEN: undefined,
      CODEX_SQLITE_HOME: undefined,
      CODEX_EXEC_SERVER_URL: undefined,
      CODEX_CA_CERTIFICATE: undefined,
      CODEX_INTERNAL_ORIGINATOR_OVERRIDE: undefined,
      HTTP_PROXY: undefined,
      HTTPS_PROXY: undefined,
      ALL_PROXY: undefined,
      http_proxy: undefined,
      https_proxy: undefined,
      all_proxy: undefined,
    },
    baseUrlOverride: (scenario) => codexBaseUrlOverride(options, scenario),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * The config: a custom Responses API provider (`wire_api = "chat"` is rejected by 0.171.0) with
 * the key from CODEX_FAKE_API_KEY_VAR and no `base_url` (given per run), no approvals and no
 * sandbox (commands just run), and no outside traffic: the plugin and app sync reach out at
 * start-up, and with analytics on every run waits about 5 s at exit for an upload.
 */
function configToml(options: CodexEnvOptions): string {
  const idleTimeout = options.streamIdleTimeoutMs === undefined ? [] : [`stream_idle_timeout_ms = ${options.streamIdleTimeoutMs}`];
  return [
    `model = ${JSON.stringify(CODEX_MODEL)}`,
    `model_provider = ${JSON.stringify(CODEX_FAKE_PROVIDER)}`,
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    '',
    `[model_providers.${CODEX_FAKE_PROVIDER}]`,
    'name = "agent-rx fake model server"',
    'wire_api = "responses"',
    `env_key = ${JSON.stringify(CODEX_FAKE_API_KEY_VAR)}`,
    `request_max_retries = ${options.requestMaxRetries ?? 1}`,
    `stream_max_retries = ${options.streamMaxRetries ?? 1}`,
    ...idleTimeout,
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n');
}
