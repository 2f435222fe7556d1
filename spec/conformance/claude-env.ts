/**
 * Running the real Claude Code CLI (the pinned devDependency) offline against the fake model
 * server, with nothing read from or written to the real home:
 *
 *   <root>/home    HOME: the CLI writes `.claude.json` and `.claude/` (sessions, shell snapshots)
 *   <root>/work    the cwd (sessions are keyed by it: resume needs the same HOME and cwd)
 *   <root>/tmp     TMPDIR and CLAUDE_CODE_TMPDIR (Bash task output, otherwise /tmp/claude-<uid>)
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeExecutable as claudeLookup } from '../../lib/agents/claude/executable.js';
import { findExecutable } from '../../lib/agents/shared/setup/find-executable.js';
import { cliUnderTest } from './cli-under-test.js';

/** The API key the CLI is given; the fake server logs what it receives (`RequestLogEntry.apiKey`). */
export const CLAUDE_FAKE_API_KEY = 'agent-rx-fake-claude-key';

/**
 * How to start the pinned Claude Code CLI after a plain `npm ci`: its native binary, as the library
 * finds it without an `executable` (`findExecutable(claudeExecutable)`: the platform package's, since the
 * package's own `bin/claude.exe` is a shell stub until its install script has run). The specs
 * name it explicitly, so that a run never falls back to a `claude` on the machine's PATH.
 * `AGENT_RX_CLAUDE_BIN` names another one (see cli-under-test.ts).
 */
export function claudeExecutable(): { readonly command: string; readonly args: readonly string[] } {
  return cliUnderTest('claude', () => {
    const found = findExecutable(claudeLookup, { PATH: '' });
    if (found.foundBy !== 'package') throw new Error("Claude Code's native binary is missing from node_modules (npm ci with optional dependencies?)");
    return { command: found.command, args: [] };
  });
}

export interface ClaudeEnvOptions {
  /** The fake server's base URL, e.g. `server.baseUrl`; the CLI POSTs to `<baseUrl>/v1/messages?beta=true`. */
  readonly baseUrl: string;
  /**
   * `CLAUDE_CODE_MAX_RETRIES`. Default 1 (one `api_retry`, then the failure, ~1.5-3 s); the CLI's
   * own default is 10 with exponential backoff, about 3 minutes for a failing run.
   */
  readonly maxRetries?: number | 'cli-default';
  /** `API_TIMEOUT_MS`: how long the CLI waits for response headers. Default 10000 (CLI: 600000). */
  readonly apiTimeoutMs?: number;
  /**
   * `CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS`, default 10000 (the CLI's minimum). 2.1.332 applies it to a
   * custom base URL too (a stalled stream is abandoned and asked again without streaming); 2.1.197
   * applies it only to the first-party API, so a stalled stream from a custom base URL is not abandoned by it.
   */
  readonly streamIdleTimeoutMs?: number;
}

export interface ClaudeEnv {
  /** Temp root holding everything below; removed by cleanup(). */
  readonly root: string;
  readonly home: string;
  /** Working directory to run the CLI in. */
  readonly cwd: string;
  /** Variables to merge over `process.env` (`undefined` removes one the host might have set). */
  readonly env: Readonly<Record<string, string | undefined>>;
  cleanup(): Promise<void>;
}

/** A fresh HOME, cwd and temp dir for Claude Code runs. Reuse one for `--resume` / `--continue`. */
export function createClaudeEnv(options: ClaudeEnvOptions): ClaudeEnv {
  const root = mkdtempSync(join(tmpdir(), 'agent-rx-claude-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const tmp = join(root, 'tmp');
  for (const dir of [home, cwd, tmp]) mkdirSync(dir);
  const maxRetries = options.maxRetries ?? 1;
  return {
    root,
    home,
    cwd,
    env: {
      HOME: home,
      TMPDIR: tmp,
      CLAUDE_CODE_TMPDIR: tmp,
      ANTHROPIC_BASE_URL: options.baseUrl.replace(/\/+$/, ''),
      ANTHROPIC_API_KEY: CLAUDE_FAKE_API_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_MAX_RETRIES: maxRetries === 'cli-default' ? undefined : String(maxRetries),
      API_TIMEOUT_MS: String(options.apiTimeoutMs ?? 10_000),
      CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS: String(options.streamIdleTimeoutMs ?? 10_000),
      // Host settings that would send the CLI elsewhere or read the real configuration.
      CLAUDE_CONFIG_DIR: undefined,
      ANTHROPIC_AUTH_TOKEN: undefined,
      ANTHROPIC_MODEL: undefined,
      ANTHROPIC_SMALL_FAST_MODEL: undefined,
      ANTHROPIC_CUSTOM_HEADERS: undefined,
      CLAUDE_CODE_USE_BEDROCK: undefined,
      CLAUDE_CODE_USE_VERTEX: undefined,
      CLAUDE_CODE_OAUTH_TOKEN: undefined,
      CLAUDECODE: undefined,
      CLAUDE_CODE_ENTRYPOINT: undefined,
      HTTP_PROXY: undefined,
      HTTPS_PROXY: undefined,
      http_proxy: undefined,
      https_proxy: undefined,
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
