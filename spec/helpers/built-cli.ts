import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './tagged-child.js';

/**
 * The command line as it ships: `dist/cli/main.js`, the build of lib/ (`tsc -p
 * tsconfig.build.json`). Specs that start the command line many times start this one: a start
 * costs about 1 s of CPU, against 2.4 s through tsx, which compiles its sources each time.
 */
export const BUILT_CLI = join(ROOT, 'dist/cli/main.js');

const CACHE = join(ROOT, 'node_modules/.cache/agent-rx');
/** Written once a build is over, dated when it started: sources changed after that make it old. */
const STAMP = join(CACHE, 'dist-built');
const LOCK = join(CACHE, 'dist-building');
const SOURCES = ['lib', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/**
 * The path of the built command line, built first when lib/ changed since the last build (or
 * there is none). Jest workers build one at a time: the others wait for the lock, then find it
 * built.
 */
export async function builtCli(): Promise<string> {
  mkdirSync(CACHE, { recursive: true });
  for (;;) {
    if (isFresh()) return BUILT_CLI;
    try {
      mkdirSync(LOCK);
    } catch {
      // Another worker builds; a lock left by a process that died goes after two minutes.
      if (Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 120_000) rmSync(LOCK, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    try {
      if (!isFresh()) {
        rmSync(STAMP, { force: true });
        const started = new Date();
        await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT }).catch((error: unknown) => {
          // tsc says what failed on stdout.
          throw new Error(`the build of lib/ for the command line's specs failed:\n${String((error as { readonly stdout?: unknown }).stdout ?? error)}`);
        });
        writeFileSync(STAMP, '');
        utimesSync(STAMP, started, started);
      }
      return BUILT_CLI;
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

function isFresh(): boolean {
  const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs;
  return built !== undefined && existsSync(BUILT_CLI) && SOURCES.every((source) => newest(join(ROOT, source)) < built);
}

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newest(join(path, entry))));
}
