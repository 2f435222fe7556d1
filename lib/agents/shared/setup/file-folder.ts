import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SettingsOverlay } from '../../../process/overlay.js';

/**
 * A folder of its own in `parent` (named `<prefix>…`, mode 0700) holding one file, `name`, with
 * `text` (mode 0600: it may hold a token): an overlay's `create` for an agent that is pointed at a
 * file. Removing it is idempotent and never throws.
 */
export function fileFolder(parent: string, prefix: string, name: string, text: string): SettingsOverlay {
  const dir = mkdtempSync(join(parent, prefix));
  try {
    writeFileSync(join(dir, name), text, { mode: 0o600 });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    dir,
    remove: () => {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // already gone
      }
    },
  };
}
