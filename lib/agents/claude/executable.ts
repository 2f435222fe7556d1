import { join } from 'node:path';
import type { ExecutableLookup } from '../definition.js';

/**
 * Where Claude Code is when no `executable` is given: the native binary of its platform package
 * (`@anthropic-ai/claude-code-<platform>-<arch>[-musl]`); the package's own `bin/claude.exe` is
 * that binary only where its install script ran (elsewhere it is a stub that exits 1); a `claude`
 * on PATH that is that stub leads to its package's binary too; else `claude` on PATH.
 */
export const claudeExecutable: ExecutableLookup = {
  names: ['claude'],
  native: {
    packageName: '@anthropic-ai/claude-code',
    platformPackage: (platform) => `@anthropic-ai/claude-code-${platform.os}-${platform.arch}${platform.musl ? '-musl' : ''}`,
    candidates: (dir, platform) => [join(dir, platform.os === 'win32' ? 'claude.exe' : 'claude'), join(dir, 'bin', 'claude.exe')],
    nativeOnly: true,
    isLauncher: (realPath) => realPath.endsWith('claude.exe'),
  },
};
