import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunOverlay } from '../../definition.js';
import { asRecord, createConfigOverlay, type SettingsOverlay } from '../../shared/setup/settings-overlay.js';

/** The variable pi reads its configuration directory from. */
export const PI_AGENT_DIR_ENV = 'PI_CODING_AGENT_DIR';

export type { SettingsOverlay } from '../../shared/setup/settings-overlay.js';

/**
 * Builds a per-run configuration directory for pi that is the real one (every entry linked,
 * so models, auth and sessions are the user's) except `settings.json`, which is the real settings
 * with `patch` merged over them. pi has no flag or variable for a settings override; its
 * configuration directory is the one thing that can be pointed elsewhere per run. It is made in
 * `parent` (the OS temporary directory unless given).
 */
export function createSettingsOverlay(
  realDir: string,
  patch: (settings: Record<string, unknown>) => Record<string, unknown>,
  keepSessions: boolean,
  parent: string = tmpdir(),
): SettingsOverlay {
  // Sessions must land in the real directory, so it exists before it is linked.
  return createConfigOverlay({ realDir, patch, ensure: keepSessions ? ['sessions'] : [], parent, prefix: 'agent-rx-pi-' });
}

/** pi's configuration directory for an environment: `PI_CODING_AGENT_DIR` (with `~`), else `~/.pi/agent`. */
export function piAgentDir(env: Readonly<Record<string, string | undefined>>): string {
  const configured = env[PI_AGENT_DIR_ENV];
  if (configured === undefined || configured === '') return join(homedir(), '.pi', 'agent');
  if (configured === '~') return homedir();
  return configured.startsWith('~/') ? join(homedir(), configured.slice(2)) : configured;
}

/** Switches off both of pi's retry layers: its own auto-retry and the HTTP SDK's retries. */
export function withoutRetries(settings: Record<string, unknown>): Record<string, unknown> {
  const retry = asRecord(settings['retry']);
  return { ...settings, retry: { ...retry, enabled: false, provider: { ...asRecord(retry['provider']), maxRetries: 0 } } };
}

/**
 * The overlay a pi run or session gets with `agentRetry: false`: pi's configuration with both
 * retry layers off. `savesSession`: pi writes its session, so the real `sessions/` must exist.
 */
export function piNoRetryOverlay(savesSession: boolean): RunOverlay {
  return {
    create: (env, parent) => createSettingsOverlay(piAgentDir(env), withoutRetries, savesSession, parent),
    env: PI_AGENT_DIR_ENV,
    what: "pi's settings without retries",
  };
}
