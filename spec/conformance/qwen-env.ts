/**
 * Running the real Qwen Code (the pinned devDependency) offline against the fake model server's
 * OpenAI chat-completions API, with nothing read from or written to the real home:
 *
 *   <root>/home   HOME: `.qwen/settings.json` names the fake server as an OpenAI-compatible
 *                 provider (`security.auth`); the CLI keeps its sessions under `.qwen/projects/`
 *                 (`--resume` needs the same HOME and cwd)
 *   <root>/work   the cwd
 *   <root>/tmp    TMPDIR
 *
 * The model id is sent as it is: it picks the scenario (or a `scenarioMarker` in the prompt does).
 * The runs' own configuration folder (`QWEN_HOME`, the definition's overlay) links this home's
 * `.qwen` and makes its settings quiet.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cliUnderTest } from './cli-under-test.js';

/** The API key the CLI is given; the fake server does not check it. */
export const QWEN_FAKE_API_KEY = 'agent-rx-fake-qwen-key';

/**
 * How to start the pinned Qwen Code as one process: `node <@qwen-code/qwen-code>/cli.js` with this
 * Node (its `qwen` bin, `cli-entry.js`, starts `cli.js` as a second process).
 * `AGENT_RX_QWEN_BIN` names another one (see cli-under-test.ts).
 */
export function qwenCommand(): { readonly command: string; readonly args: readonly string[] } {
  return cliUnderTest('qwen', () => {
    const packageJson = createRequire(import.meta.url).resolve('@qwen-code/qwen-code/package.json');
    return { command: process.execPath, args: [join(dirname(packageJson), 'cli.js')] };
  });
}

export interface QwenEnvOptions {
  /** The fake server's OpenAI base URL (`server.openaiBaseUrl`, `http://127.0.0.1:PORT/v1`). */
  readonly baseUrl: string;
  /** More user settings, merged over the env's at the top level. */
  readonly settings?: Readonly<Record<string, unknown>>;
}

export interface QwenEnv {
  /** Temp root holding everything below; removed by cleanup(). */
  readonly root: string;
  readonly home: string;
  /** Working directory to run the CLI in. */
  readonly cwd: string;
  /** TMPDIR. */
  readonly tmp: string;
  /** Variables to merge over `process.env` (`undefined` removes one the host might have set). */
  readonly env: Readonly<Record<string, string | undefined>>;
  cleanup(): Promise<void>;
}

/** A fresh HOME, cwd and temp dir for Qwen Code runs. Reuse one for `--resume`. */
export function createQwenEnv(options: QwenEnvOptions): QwenEnv {
  const root = mkdtempSync(join(tmpdir(), 'agent-rx-qwen-env-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const tmp = join(root, 'tmp');
  for (const dir of [home, join(home, '.qwen'), cwd, tmp]) mkdirSync(dir);
  const settings = {
    security: { auth: { selectedType: 'openai', apiKey: QWEN_FAKE_API_KEY, baseUrl: options.baseUrl } },
    // The vendored ripgrep is shipped without its run bit: each run would say so on stderr.
    tools: { useRipgrep: false },
    ...options.settings,
  };
  writeFileSync(join(home, '.qwen', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  return {
    root,
    home,
    cwd,
    tmp,
    env: {
      HOME: home,
      TMPDIR: tmp,
      QWEN_HOME: undefined,
      QWEN_RUNTIME_DIR: undefined,
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      OPENAI_MODEL: undefined,
      HTTP_PROXY: undefined,
      HTTPS_PROXY: undefined,
      http_proxy: undefined,
      https_proxy: undefined,
      QWEN_SANDBOX: undefined,
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
