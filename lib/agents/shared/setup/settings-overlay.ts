import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SettingsOverlay } from '../../definition.js';

export type { SettingsOverlay };

export interface ConfigOverlayOptions {
  /** The agent's real configuration directory (it need not exist). */
  readonly realDir: string;
  /** What `settings.json` becomes: the real settings (or `{}`) in, the run's settings out. */
  readonly patch: (settings: Record<string, unknown>) => Record<string, unknown>;
  /** Entries made in the real directory first, so that what the agent writes there lands in the real one (sessions). */
  readonly ensure: readonly string[];
  /** Where the overlay is made. */
  readonly parent: string;
  /** The overlay folder's name prefix. */
  readonly prefix: string;
  /** The configuration directory's name inside the overlay, when the agent is pointed at its parent (a home: `.gemini`). */
  readonly subdir?: string;
}

/**
 * A per-run configuration directory for an agent that has no flag or variable for one setting:
 * the real directory with every entry linked (models, credentials, sessions stay the user's)
 * except `settings.json`, which is the real settings with a patch merged over them.
 */
export function createConfigOverlay(options: ConfigOverlayOptions): SettingsOverlay {
  const { realDir, patch, ensure, parent, prefix, subdir } = options;
  const dir = mkdtempSync(join(parent, prefix));
  try {
    const configDir = subdir === undefined ? dir : join(dir, subdir);
    if (subdir !== undefined) mkdirSync(configDir);
    for (const entry of ensure) mkdirSync(join(realDir, entry), { recursive: true });
    const entries = existsSync(realDir) ? readdirSync(realDir) : [];
    for (const entry of entries) {
      if (entry !== 'settings.json') symlinkSync(join(realDir, entry), join(configDir, entry));
    }
    // This user's alone: it may hold secrets (an MCP server's headers).
    writeFileSync(join(configDir, 'settings.json'), `${JSON.stringify(patch(readSettings(join(realDir, 'settings.json'))), null, 2)}\n`, { mode: 0o600 });
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

export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function readSettings(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  return asRecord(parsed);
}

// rmSync does not follow the links: only the overlay's own entries go.
function removeOverlay(dir: string): void {
  try {
    if (lstatSync(dir).isDirectory()) rmSync(dir, { recursive: true, force: true });
  } catch {
    // already gone
  }
}
