import type { RunOverlay } from '../../definition.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { asRecord, createConfigOverlay, type SettingsOverlay } from '../../shared/setup/settings-overlay.js';
import { withMcpServers } from '../../acp/mcp-settings.js';

/** The variable Gemini CLI reads its home from (the folder that holds `.gemini`), instead of HOME. */
export const GEMINI_HOME_ENV = 'GEMINI_CLI_HOME';

/** Gemini CLI's home for an environment: `GEMINI_CLI_HOME`, else `HOME`, else this user's home. */
export function geminiHome(env: Readonly<Record<string, string | undefined>>): string {
  for (const name of [GEMINI_HOME_ENV, 'HOME']) {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
  }
  return homedir();
}

/**
 * A per-run home for Gemini CLI whose `.gemini` is the real one (every entry linked: credentials,
 * sessions, trusted folders) except `settings.json`, the user's settings with `patch` merged over
 * them. The user's settings are the place that works: Gemini CLI ignores a workspace's settings
 * in a folder it trusts only for the run (`--skip-trust`), and system settings files that are not
 * owned by root in folders only root may write. It is made in `parent`.
 */
export function createGeminiHomeOverlay(
  realHome: string,
  patch: (settings: Record<string, unknown>) => Record<string, unknown>,
  parent: string,
): SettingsOverlay {
  // Sessions are kept under .gemini/tmp: it exists in the real folder before it is linked.
  return createConfigOverlay({ realDir: join(realHome, '.gemini'), patch, ensure: ['tmp'], parent, prefix: 'agent-rx-gemini-', subdir: '.gemini' });
}

/** Gemini CLI tries each model request once: no retries of its own. */
export function withoutRetries(settings: Record<string, unknown>): Record<string, unknown> {
  return { ...settings, general: { ...asRecord(settings['general']), maxAttempts: 1 } };
}

/** What a run's settings change of the user's. */
export interface GeminiSettingsPatch {
  /** One attempt per model request (`general.maxAttempts: 1`). */
  readonly noRetries: boolean;
  /** The run's MCP servers in settings.json's form: they replace the user's (`mcpServers`, `mcp.allowed`). */
  readonly mcpServers?: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * The overlay a Gemini CLI run gets with `agentRetry: false` (its settings with one attempt per
 * request) or MCP servers (the settings' servers are the run's alone; their headers are in the
 * overlay's `settings.json`, readable by this user only).
 */
export function geminiSettingsOverlay(patch: GeminiSettingsPatch): RunOverlay {
  const { noRetries, mcpServers } = patch;
  const more = [...(noRetries ? ['without retries'] : []), ...(mcpServers === undefined ? [] : ['with its MCP servers'])];
  return {
    create: (env, parent) =>
      createGeminiHomeOverlay(
        geminiHome(env),
        (settings) => {
          const tried = noRetries ? withoutRetries(settings) : settings;
          return mcpServers === undefined ? tried : withMcpServers(tried, { ...mcpServers });
        },
        parent,
      ),
    env: GEMINI_HOME_ENV,
    what: `Gemini CLI's settings ${more.join(' and ')}`,
  };
}
