import { closeSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findOnPath, isExecutable, resolvePackageJson } from '../shared/executable.js';

/** Where the Claude Code CLI is, as `runClaudeCode` and `claudeCodeSession` start it. */
export interface ClaudeExecutable {
  /** The program to run: the native binary when one was found, else `claude` (looked up on PATH at spawn). */
  readonly command: string;
  /** How it was found: the `@anthropic-ai/claude-code` package this library resolves, the `claude` on PATH, or neither. */
  readonly foundBy: 'package' | 'path' | 'none';
}

const PACKAGE = '@anthropic-ai/claude-code';

/**
 * Finds the Claude Code CLI's native binary, in this order:
 * 1. the `@anthropic-ai/claude-code` package as this library resolves it (a dependency of the
 *    application), through its platform package `@anthropic-ai/claude-code-<platform>-<arch>[-musl]`;
 *    its own `bin/claude.exe` only when it is the native binary (its install script replaces a
 *    small shell stub with it; where install scripts are not allowed to run, the stub stays and
 *    only exits 1);
 * 2. `claude` on PATH: when it is that package's `bin/claude.exe` (a global `npm install -g`, or
 *    `node_modules/.bin`), the native binary of that package; otherwise the program itself (a
 *    native install);
 * 3. otherwise plain `claude`, so that starting it fails with ENOENT and the run says how to install it.
 *
 * `runClaudeCode` and `claudeCodeSession` call it at each subscription when no `executable` is
 * given. Pass `executable` to choose another.
 *
 * @example
 * const claude = findClaudeExecutable();
 * if (claude.foundBy === 'none') console.warn('Claude Code is not installed: npm install -g @anthropic-ai/claude-code');
 * else console.log(`runClaudeCode starts ${claude.command} (found by ${claude.foundBy})`);
 */
export function findClaudeExecutable(env: Readonly<Record<string, string | undefined>> = process.env): ClaudeExecutable {
  const packaged = nativeOf(resolvePackageJson(PACKAGE, import.meta.url));
  if (packaged !== undefined) return { command: packaged, foundBy: 'package' };
  const onPath = findOnPath(process.platform === 'win32' ? ['claude.exe', 'claude.cmd', 'claude'] : ['claude'], env);
  if (onPath === undefined) return { command: 'claude', foundBy: 'none' };
  return { command: nativeOf(wrapperPackageOf(onPath)) ?? onPath, foundBy: 'path' };
}

/** The native binary of the package whose `package.json` is `packageJson`: its platform package's, else its own bin when that is one. */
function nativeOf(packageJson: string | undefined): string | undefined {
  if (packageJson === undefined) return undefined;
  const binary = process.platform === 'win32' ? 'claude.exe' : 'claude';
  const platformJson = resolvePackageJson(`${PACKAGE}-${platformKey()}`, packageJson);
  if (platformJson !== undefined) {
    const candidate = join(dirname(platformJson), binary);
    if (isExecutable(candidate)) return candidate;
  }
  const own = join(dirname(packageJson), 'bin', 'claude.exe');
  return isExecutable(own) && isNativeBinary(own) ? own : undefined;
}

let platform: string | undefined;

// The platform packages' suffix: `linux-x64`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64`. Found
// once: on Linux it takes a diagnostic report (whether the C library is glibc), which is not cheap.
function platformKey(): string {
  if (platform !== undefined) return platform;
  if (process.platform !== 'linux') platform = `${process.platform}-${process.arch}`;
  else {
    const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
    platform = `linux-${process.arch}${report.header?.glibcVersionRuntime === undefined ? '-musl' : ''}`;
  }
  return platform;
}

/** When `program` is the package's `bin/claude.exe` (linked or copied), that package's `package.json`. */
function wrapperPackageOf(program: string): string | undefined {
  try {
    const real = realpathSync(program);
    if (!real.endsWith('claude.exe')) return undefined;
    const packageJson = join(dirname(real), '..', 'package.json');
    const name = (JSON.parse(readFileSync(packageJson, 'utf8')) as { name?: unknown }).name;
    return name === PACKAGE ? packageJson : undefined;
  } catch {
    return undefined;
  }
}

// ELF, Mach-O (both byte orders, 32/64 bit, universal) or PE: not a script such as the install stub.
function isNativeBinary(path: string): boolean {
  const head = Buffer.alloc(4);
  try {
    const fd = openSync(path, 'r');
    try {
      readSync(fd, head, 0, 4, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  const magic = head.toString('hex');
  return magic === '7f454c46' || head.subarray(0, 2).toString('latin1') === 'MZ' || ['feedface', 'feedfacf', 'cefaedfe', 'cffaedfe', 'cafebabe'].includes(magic);
}
