// Finding an agent's program when the caller names none: a native binary an npm package ships, a
// name on PATH (a launcher there leads to its package's binary), or the bare name.
import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import type { ExecutableLookup, NativeBinary, PackageScript, Platform } from '../../definition.js';
import type { ProcessOptions } from '../../../process/options.js';

/** Where an agent's program was found. */
export interface FoundExecutable {
  /** The program to run: a native binary when one was found, else what PATH gave, else the bare name (looked up at spawn). */
  readonly command: string;
  /** Arguments that go before the agent's own: the script `command` (Node) runs; none for a program. */
  readonly args: readonly string[];
  /** A folder of programs shipped beside it, to put first on PATH; `undefined` for none. */
  readonly pathDir: string | undefined;
  /** How: a package this library resolves, PATH, or neither. */
  readonly foundBy: 'package' | 'path' | 'none';
}

/**
 * Finds an agent's program (see {@link ExecutableLookup}), in this order: its native binary in the
 * npm package this library resolves (a dependency of the application); the first of its names on
 * `env.PATH`, or, when that is the package's launcher, the native binary of that package; else the
 * bare name, so that starting it fails with ENOENT and the run says how to install it. Called at
 * each subscription of a run that names no executable: a program installed later is found.
 */
export function findExecutable(lookup: ExecutableLookup, env: Readonly<Record<string, string | undefined>> = process.env): FoundExecutable {
  const { native, script } = lookup;
  if (native !== undefined) {
    const packaged = nativeOf(native, resolvePackageJson(native.packageName, import.meta.url));
    if (packaged !== undefined) return { ...packaged, foundBy: 'package' };
  }
  if (script !== undefined) {
    const packaged = scriptOf(script, resolvePackageJson(script.packageName, import.meta.url));
    if (packaged !== undefined) return { ...packaged, foundBy: 'package' };
  }
  const names = process.platform === 'win32' ? lookup.names.flatMap((name) => [`${name}.exe`, `${name}.cmd`, name]) : lookup.names;
  const onPath = findOnPath(names, env);
  const bare = lookup.names[0] ?? '';
  if (onPath === undefined) return { command: bare, args: [], pathDir: undefined, foundBy: 'none' };
  const behind =
    (native === undefined ? undefined : nativeOf(native, launcherPackageOf(native, onPath))) ??
    (script === undefined ? undefined : scriptOf(script, packageOfProgram(script.packageName, onPath)));
  return { ...(behind ?? { command: onPath, args: [], pathDir: undefined }), foundBy: 'path' };
}

/** `node <entry>` for the package whose `package.json` is `packageJson`, when it has that entry. */
function scriptOf(script: PackageScript, packageJson: string | undefined): Omit<FoundExecutable, 'foundBy'> | undefined {
  if (packageJson === undefined) return undefined;
  const entry = join(dirname(packageJson), script.entry);
  return existsSync(entry) ? { command: process.execPath, args: [entry], pathDir: undefined } : undefined;
}

/** When `program` (found on PATH) is a file of the package `name` (its launcher), that package's `package.json`. */
function packageOfProgram(name: string, program: string): string | undefined {
  try {
    let dir = dirname(realpathSync(program));
    for (let level = 0; level < 3; level += 1) {
      const packageJson = join(dir, 'package.json');
      if (existsSync(packageJson)) return (JSON.parse(readFileSync(packageJson, 'utf8')) as { name?: unknown }).name === name ? packageJson : undefined;
      dir = dirname(dir);
    }
  } catch {
    // Not readable: not the package's.
  }
  return undefined;
}

/** The native binary of the package whose `package.json` is `packageJson`: its platform package's first, then its own. */
function nativeOf(native: NativeBinary, packageJson: string | undefined): Omit<FoundExecutable, 'foundBy'> | undefined {
  if (packageJson === undefined) return undefined;
  const platform = currentPlatform();
  const dirs: string[] = [];
  const platformPackage = native.platformPackage(platform);
  const platformJson = platformPackage === undefined ? undefined : resolvePackageJson(platformPackage, packageJson);
  if (platformJson !== undefined) dirs.push(dirname(platformJson));
  dirs.push(dirname(packageJson));
  for (const dir of dirs) {
    for (const candidate of native.candidates(dir, platform)) {
      if (!isExecutable(candidate) || (native.nativeOnly === true && !isNativeBinary(candidate))) continue;
      const pathDir = native.pathDir?.(candidate);
      return { command: candidate, args: [], pathDir: pathDir !== undefined && existsSync(pathDir) ? pathDir : undefined };
    }
  }
  return undefined;
}

/** When `program` (found on PATH) is the package's launcher, that package's `package.json`. */
function launcherPackageOf(native: NativeBinary, program: string): string | undefined {
  try {
    const real = realpathSync(program);
    if (!native.isLauncher(real)) return undefined;
    const packageJson = join(dirname(real), '..', 'package.json');
    const name = (JSON.parse(readFileSync(packageJson, 'utf8')) as { name?: unknown }).name;
    return name === native.packageName ? packageJson : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `path` is a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first of `names` found as an executable file in a folder of `env.PATH`, folder by folder. */
export function findOnPath(names: readonly string[], env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    for (const name of names) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The `package.json` of the package `name` as a module at `from` (a path or file URL) resolves it, or undefined. */
export function resolvePackageJson(name: string, from: string | URL): string | undefined {
  try {
    return createRequire(from).resolve(`${name}/package.json`);
  } catch {
    return undefined;
  }
}

let platform: Platform | undefined;

/** The platform this process runs on. Found once: on Linux whether the C library is musl takes a diagnostic report, which is not cheap. */
export function currentPlatform(): Platform {
  if (platform !== undefined) return platform;
  let musl = false;
  if (process.platform === 'linux') {
    const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
    musl = report.header?.glibcVersionRuntime === undefined;
  }
  platform = { os: process.platform, arch: process.arch, musl };
  return platform;
}

// ELF, Mach-O (both byte orders, 32/64 bit, universal) or PE: not a script such as an install stub.
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

/**
 * Process options with `pathDir` first on PATH (as the package's launcher does): a PATH the caller
 * set (or removed, with `undefined`) wins over the host's.
 */
export function withPathDir<O extends { readonly env?: Readonly<Record<string, string | undefined>> }>(options: O, pathDir: string | undefined): O {
  if (pathDir === undefined) return options;
  const path = options.env !== undefined && Object.hasOwn(options.env, 'PATH') ? options.env['PATH'] : process.env['PATH'];
  return { ...options, env: { ...options.env, PATH: path === undefined || path === '' ? pathDir : `${pathDir}${delimiter}${path}` } };
}

/**
 * The program to start and its process options: the one the options name, else the one the
 * definition's lookup finds now (with the folder of programs it ships first on PATH).
 */
export function programOf<O extends ProcessOptions>(
  definition: { readonly executable: ExecutableLookup },
  named: string | undefined,
  processOptions: O,
): { readonly command: string; readonly args: readonly string[]; readonly processOptions: O } {
  if (named !== undefined) return { command: named, args: [], processOptions };
  const found = findExecutable(definition.executable, { ...process.env, ...processOptions.env });
  return { command: found.command, args: found.args, processOptions: withPathDir(processOptions, found.pathDir) };
}
