import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { findOnPath, isExecutable } from '../shared/executable.js';

/** Where the Codex CLI is, as `runCodex` starts it. */
export interface CodexExecutable {
  /** The program to run: the native binary when one was found, else `codex` (looked up on PATH at spawn). */
  readonly command: string;
  /**
   * The folder of programs the npm package ships next to the binary (its `rg`), for PATH, as the
   * Node launcher and the SDK add it; `undefined` when there is none.
   */
  readonly pathDir: string | undefined;
  /** How it was found: the `@openai/codex` package this library resolves, the `codex` on PATH, or neither. */
  readonly foundBy: 'package' | 'path' | 'none';
}

// The Rust target each npm platform package carries.
const TARGETS: Readonly<Record<string, string>> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

/**
 * Finds the Codex CLI's native binary, in this order:
 * 1. the `@openai/codex` package as this library resolves it (a dependency of the application),
 *    through its platform package `@openai/codex-<platform>-<arch>` (`vendor/<target>/bin/codex`);
 * 2. `codex` on PATH: when it is the npm package's Node launcher (a global `npm install -g
 *    @openai/codex`), the native binary of that package; otherwise the program itself (a native
 *    install);
 * 3. otherwise plain `codex`, so that starting it fails with ENOENT and the run says how to install it.
 *
 * `runCodex` calls it at each subscription when no `executable` is given: a Codex installed later
 * is found. Pass `executable` to choose another.
 *
 * @example
 * const codex = findCodexExecutable();
 * if (codex.foundBy === 'none') console.warn('Codex is not installed: npm install -g @openai/codex');
 * else console.log(`runCodex starts ${codex.command} (found by ${codex.foundBy})`);
 */
export function findCodexExecutable(env: Readonly<Record<string, string | undefined>> = process.env): CodexExecutable {
  const target = TARGETS[`${process.platform}-${process.arch}`];
  if (target === undefined) return { command: 'codex', pathDir: undefined, foundBy: 'none' };
  const packaged = nativeOf(resolvePackage(createRequire(import.meta.url)), target);
  if (packaged !== undefined) return { ...packaged, foundBy: 'package' };
  const onPath = findOnPath(process.platform === 'win32' ? ['codex.exe', 'codex.cmd'] : ['codex'], env);
  if (onPath === undefined) return { command: 'codex', pathDir: undefined, foundBy: 'none' };
  const launcherPackage = launcherPackageOf(onPath);
  const behind = launcherPackage === undefined ? undefined : nativeOf(launcherPackage, target);
  return { ...(behind ?? { command: onPath, pathDir: undefined }), foundBy: 'path' };
}

/** The `package.json` of `@openai/codex`, or undefined. */
function resolvePackage(require: NodeJS.Require): string | undefined {
  try {
    return require.resolve('@openai/codex/package.json');
  } catch {
    return undefined;
  }
}

/** The native binary of the `@openai/codex` package whose `package.json` is `packageJson`. */
function nativeOf(packageJson: string | undefined, target: string): Omit<CodexExecutable, 'foundBy'> | undefined {
  if (packageJson === undefined) return undefined;
  const binary = process.platform === 'win32' ? 'codex.exe' : 'codex';
  const vendors = [join(dirname(packageJson), 'vendor')];
  try {
    const platformJson = createRequire(packageJson).resolve(`@openai/codex-${process.platform}-${process.arch}/package.json`);
    vendors.unshift(join(dirname(platformJson), 'vendor'));
  } catch {
    // Older packages carried the binaries in their own vendor folder.
  }
  for (const vendor of vendors) {
    const root = join(vendor, target);
    // The current layout, then the one before it.
    for (const candidate of [join(root, 'bin', binary), join(root, 'codex', binary)]) {
      if (isExecutable(candidate)) {
        const pathDir = join(root, 'codex-path');
        return { command: candidate, pathDir: existsSync(pathDir) ? pathDir : undefined };
      }
    }
  }
  return undefined;
}

/** When `program` is the npm package's launcher (`…/@openai/codex/bin/codex.js`), that package's `package.json`. */
function launcherPackageOf(program: string): string | undefined {
  try {
    const real = realpathSync(program);
    if (!real.endsWith('.js')) return undefined;
    const packageJson = join(dirname(real), '..', 'package.json');
    const name = (JSON.parse(readFileSync(packageJson, 'utf8')) as { name?: unknown }).name;
    return name === '@openai/codex' ? packageJson : undefined;
  } catch {
    return undefined;
  }
}
