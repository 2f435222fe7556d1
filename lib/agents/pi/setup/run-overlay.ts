import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunOverlay, SettingsOverlay } from '../../definition.js';
import type { PiSetup } from '../args.js';
import { PI_MCP_EXTENSION, PI_MCP_FLAG } from './extensions.js';
import { createSettingsOverlay, PI_AGENT_DIR_ENV, piAgentDir, withoutRetries } from './settings-overlay.js';

/** The file of a run's MCP servers in its overlay, read by the MCP extension. */
export const PI_MCP_FILE = 'agent-rx-mcp.json';

/**
 * The overlay of a pi run or session: its configuration directory without retries
 * (`PI_CODING_AGENT_DIR`), and the file of its MCP servers (mode 0600, so the headers, a token
 * among them, are only the user's to read and never in pi's argv), named by the MCP extension's
 * flag. Without retries changed, the file is alone in a folder of its own.
 */
export function piRunOverlay(setup: PiSetup): RunOverlay {
  const { noRetry, mcp } = setup;
  return {
    create: (env, parent) => {
      const made: SettingsOverlay =
        noRetry === undefined ? plainFolder(parent) : createSettingsOverlay(piAgentDir(env), withoutRetries, noRetry.savesSession, parent);
      if (mcp !== undefined) {
        try {
          writeFileSync(join(made.dir, PI_MCP_FILE), `${JSON.stringify(mcp)}\n`, { mode: 0o600 });
        } catch (error) {
          made.remove();
          throw error;
        }
      }
      return made;
    },
    ...(noRetry === undefined ? {} : { env: PI_AGENT_DIR_ENV }),
    ...(mcp === undefined ? {} : { args: (dir: string) => ['--extension', PI_MCP_EXTENSION, PI_MCP_FLAG, join(dir, PI_MCP_FILE)] }),
    what: [noRetry === undefined ? [] : ["pi's settings without retries"], mcp === undefined ? [] : ["the run's MCP servers"]].flat().join(' and '),
  };
}

/** A folder of the run's own (mode 0700). */
function plainFolder(parent: string): SettingsOverlay {
  const dir = mkdtempSync(join(parent, 'agent-rx-pi-'));
  return {
    dir,
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
