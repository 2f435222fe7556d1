import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostId } from './run-marker.js';

let path: string | undefined;
let created = false;

/**
 * The host's own temporary folder, `<tmpdir>/agent-rx-<host id>`: what runs need on disk (pi's
 * settings overlay) goes in it. The host removes it at exit, and the keeper after a host that was
 * killed without warning, so nothing of a run's is left on disk either.
 */
export function hostTempPath(): string {
  path ??= join(tmpdir(), `agent-rx-${hostId()}`);
  return path;
}

/** The host's temporary folder, created (mode 0700) if it does not exist. */
export function hostTempDir(): string {
  const root = hostTempPath();
  // Every time: a cleaner of the temporary directory may have removed it since.
  mkdirSync(root, { mode: 0o700, recursive: true });
  created = true;
  return root;
}

/** Removes the host's temporary folder, synchronously (it runs at host exit). Never throws. */
export function removeHostTempDir(): void {
  if (!created || path === undefined) return;
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // nothing more can be done at exit
  }
}
