import { dirname, join } from 'node:path';
import type { ExecutableLookup, Platform } from '../definition.js';

// The Rust target each npm platform package carries.
const TARGETS: Readonly<Record<string, string>> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

const targetOf = (platform: Platform): string | undefined => TARGETS[`${platform.os}-${platform.arch}`];

/**
 * Where Codex is when no `executable` is given: the native binary of its platform package
 * (`@openai/codex-<platform>-<arch>`, `vendor/<target>/bin/codex`), run directly rather than the
 * package's Node launcher, which on Node 20 is a second process that forwards only some signals;
 * the programs it ships beside the binary (its `rg`) come first on PATH, as the launcher does. A
 * `codex` on PATH that is that launcher leads to its package's binary.
 */
export const codexExecutable: ExecutableLookup = {
  names: ['codex'],
  native: {
    packageName: '@openai/codex',
    platformPackage: (platform) => (targetOf(platform) === undefined ? undefined : `@openai/codex-${platform.os}-${platform.arch}`),
    candidates: (dir, platform) => {
      const target = targetOf(platform);
      if (target === undefined) return [];
      const binary = platform.os === 'win32' ? 'codex.exe' : 'codex';
      // The current layout, then the one before it.
      return [join(dir, 'vendor', target, 'bin', binary), join(dir, 'vendor', target, 'codex', binary)];
    },
    pathDir: (binary) => join(dirname(dirname(binary)), 'codex-path'),
    isLauncher: (realPath) => realPath.endsWith('.js'),
  },
};
