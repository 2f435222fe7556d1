import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/** The variable pi reads its configuration directory from. */
export const PI_AGENT_DIR_ENV = 'PI_CODING_AGENT_DIR';

export interface SettingsOverlay {
  /** The directory to give pi as its configuration directory. */
  readonly dir: string;
  /** Removes the overlay (never the real configuration). Idempotent, never throws. */
  remove(): void;
}

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
  const dir = mkdtempSync(join(parent, 'agent-rx-pi-'));
  try {
    // Sessions must land in the real directory, so it exists before it is linked.
    if (keepSessions) mkdirSync(join(realDir, 'sessions'), { recursive: true });
    const entries = existsSync(realDir) ? readdirSync(realDir) : [];
    for (const entry of entries) {
      if (entry !== 'settings.json') symlinkSync(join(realDir, entry), join(dir, entry));
    }
    writeFileSync(join(dir, 'settings.json'), `${JSON.stringify(patch(readSettings(join(realDir, 'settings.json'))), null, 2)}\n`);
  } catch (error) {
    removeOverlay(dir);
    throw error;
  }
  return {
    dir,
    remove: () => {
      removeOverlay(dir);
    },
  };
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

function readSettings(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  return asRecord(parsed);
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

// rmSync does not follow the links: only the overlay's own entries go.
function removeOverlay(dir: string): void {
  try {
    if (lstatSync(dir).isDirectory()) rmSync(dir, { recursive: true, force: true });
  } catch {
    // already gone
  }
}
