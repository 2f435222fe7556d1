import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

// Debian's chromium, headless, with nothing that reaches for the network on its own.
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

// CHROMIUM_PATH, else `chromium` on PATH; a clear failure when there is none.
export function chromiumExecutable(): string {
  const fromEnv = process.env['CHROMIUM_PATH'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error('the browser test needs Chromium: `apt-get install -y chromium` (Debian; npm test installs it when run as root), or set CHROMIUM_PATH');
}
