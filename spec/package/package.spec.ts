import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

// The package as a consumer meets it: built from a copy of the sources into a folder of its own
// (the checkout's dist/ is never touched), packed with `npm pack`, unpacked into a consumer's
// node_modules and imported from there.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY_POINTS = ['agent-rx', 'agent-rx/browser', 'agent-rx/fleet', 'agent-rx/otel', 'agent-rx/ai-sdk'];
// What the package itself imports at run time, linked into the consumer from the checkout.
const RUNTIME_PACKAGES = ['rxjs', 'zod', 'execa', '@agentclientprotocol/sdk', '@modelcontextprotocol/server', '@modelcontextprotocol/client', 'bullmq', 'ioredis', '@opentelemetry/api', 'ai', '@ai-sdk/provider'];

interface Manifest {
  exports: Record<string, string | { types: string; default: string }>;
  bin: Record<string, string>;
  files: string[];
}

let work = '';
let tarball = '';
let packed: string[] = [];
let unpacked = '';
let consumer = '';

/** The tarball's files, relative to its root (`package/` dropped). */
async function tarballFiles(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball]);
  return stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''));
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'agent-rx-package-'));
  const stage = join(work, 'stage');
  mkdirSync(stage);
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'lib']) {
    cpSync(join(ROOT, entry), join(stage, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: stage });
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: stage });
  const [report] = JSON.parse(stdout) as { filename: string }[];
  if (report === undefined) throw new Error(`npm pack reported nothing: ${stdout}`);
  tarball = join(work, report.filename);
  packed = await tarballFiles(tarball);

  consumer = join(work, 'consumer');
  mkdirSync(join(consumer, 'node_modules/@agentclientprotocol'), { recursive: true });
  mkdirSync(join(consumer, 'node_modules/@modelcontextprotocol'), { recursive: true });
  mkdirSync(join(consumer, 'node_modules/@opentelemetry'), { recursive: true });
  mkdirSync(join(consumer, 'node_modules/@ai-sdk'), { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', join(consumer, 'node_modules')]);
  unpacked = join(consumer, 'node_modules/agent-rx');
  renameSync(join(consumer, 'node_modules/package'), unpacked);
  for (const name of RUNTIME_PACKAGES) symlinkSync(join(ROOT, 'node_modules', name), join(consumer, 'node_modules', name), 'dir');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}, 180_000);

afterAll(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the built JavaScript, its declarations and the TypeScript sources, and nothing else', () => {
    expect(packed).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'lib/index.ts']));
    const outside = packed.filter((file) => !/^(dist|lib)\//.test(file) && !['package.json', 'README.md', 'LICENSE'].includes(file));
    expect(outside).toEqual([]);
  });

  it('ships no spec, fixture, benchmark or example file', () => {
    const unwanted = packed.filter((file) => /(^|\/)(spec|specs|test|tests|__tests__|fixtures|bench|examples)\//.test(file) || /\.(spec|test)\.[cm]?[jt]s$/.test(file));
    expect(unwanted).toEqual([]);
  });

  it('ships every file its exports and its bin name', () => {
    const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as Manifest;
    const targets = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : [target.types, target.default]));
    targets.push(...Object.values(manifest.bin));
    expect(targets.length).toBeGreaterThan(6);
    expect(targets.filter((target) => !packed.includes(posix.normalize(target)))).toEqual([]);
  });

  it('has a source map beside every module and declaration, and every source a map names is in the tarball', () => {
    const built = packed.filter((file) => /^dist\/.*\.(js|d\.ts)$/.test(file));
    const maps = packed.filter((file) => file.endsWith('.map'));
    expect(built.length).toBeGreaterThan(100);
    expect(built.filter((file) => !packed.includes(`${file}.map`))).toEqual([]);
    const missing: string[] = [];
    for (const map of maps) {
      const { sources, sourceRoot = '' } = JSON.parse(readFileSync(join(unpacked, map), 'utf8')) as { sources: string[]; sourceRoot?: string };
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) {
        const resolved = posix.normalize(posix.join(posix.dirname(map), sourceRoot, source));
        if (!packed.includes(resolved)) missing.push(`${map} → ${source}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has types that resolve for ES module consumers, by arethetypeswrong', async () => {
    const attw = join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js');
    const checked = await run(process.execPath, [attw, tarball, '--profile', 'esm-only', '--format', 'json'], { cwd: work, maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: unknown) => error as { stdout: string; code: number },
    );
    const report = JSON.parse(checked.stdout) as { analysis: { entrypoints: Record<string, unknown>; problems: { kind: string; entrypoint?: string; resolutionKind?: string }[] } };
    expect(Object.keys(report.analysis.entrypoints)).toEqual(expect.arrayContaining(['.', './browser', './fleet', './otel', './ai-sdk']));
    // The package is ESM only: what CommonJS `require` and node10 resolution make of it is not a problem.
    const problems = report.analysis.problems.filter((problem) => !['node10', 'node16-cjs'].includes(problem.resolutionKind ?? ''));
    expect(problems).toEqual([]);
  });

  it('has a built module for every TypeScript source it ships', () => {
    const sources = packed.filter((file) => file.startsWith('lib/'));
    expect(sources.every((file) => file.endsWith('.ts'))).toBe(true);
    expect(sources.filter((file) => !packed.includes(file.replace(/^lib\//, 'dist/').replace(/\.ts$/, '.js')))).toEqual([]);
  });
});

describe('a consumer of the packed package', () => {
  it('imports the entry points as ES modules', async () => {
    const script = join(consumer, 'esm.mjs');
    writeFileSync(
      script,
      [
        "import { runPi, retryAgentRun, stopAllRuns } from 'agent-rx';",
        "import * as browser from 'agent-rx/browser';",
        "import { createRunDispatcher, serveRuns } from 'agent-rx/fleet';",
        "import { traceRun, traceSession } from 'agent-rx/otel';",
        'console.log(JSON.stringify([typeof runPi, typeof retryAgentRun, typeof stopAllRuns, typeof browser.fromAgentEventSource, typeof createRunDispatcher, typeof serveRuns, typeof traceRun, typeof traceSession]));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, [script], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual(['function', 'function', 'function', 'function', 'function', 'function', 'function', 'function']);
  });

  it('loads the entry points with import() from CommonJS', async () => {
    const script = join(consumer, 'dynamic.cjs');
    writeFileSync(
      script,
      [
        `Promise.all(${JSON.stringify(ENTRY_POINTS)}.map((name) => import(name)))`,
        '  .then(([main, browser, fleet, otel]) => console.log(JSON.stringify([typeof main.runClaudeCode, typeof browser.isRetryableFailure, typeof fleet.checkRunSpec, typeof otel.traceRun])))',
        '  .catch((error) => { console.error(error); process.exitCode = 1; });',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, [script], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual(['function', 'function', 'function', 'function']);
  });

  it('runs its bin (what `npx agent-rx` starts once the tarball is installed)', async () => {
    const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as Manifest & { version: string };
    const bin = manifest.bin['agent-rx'];
    expect(bin).toBeDefined();
    expect(readFileSync(join(unpacked, bin ?? ''), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    const version = await run(process.execPath, [join(unpacked, bin ?? ''), '--version'], { cwd: consumer });
    expect(version.stdout).toBe(`${manifest.version}\n`);
  });

  it("finds pi's permission extension beside its built pi definition: a folder whose index.js pi loads", async () => {
    const script = join(consumer, 'pi-extension.mjs');
    writeFileSync(
      script,
      [
        "import { existsSync } from 'node:fs';",
        "import { join } from 'node:path';",
        "import { pathToFileURL } from 'node:url';",
        `const { PI_PERMISSION_EXTENSION } = await import(${JSON.stringify(pathToFileURL(join(unpacked, 'dist/agents/pi/setup/extensions.js')).href)});`,
        "const extension = await import(pathToFileURL(join(PI_PERMISSION_EXTENSION, 'index.js')).href);",
        "console.log(JSON.stringify([PI_PERMISSION_EXTENSION, existsSync(join(PI_PERMISSION_EXTENSION, 'index.ts')), typeof extension.default]));",
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, [script], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual([join(realpathSync(unpacked), 'dist/agents/pi/setup/permission-extension'), false, 'function']);
  });

  it('is told what to install when it imports agent-rx/fleet without bullmq and ioredis, agent-rx/otel without @opentelemetry/api, or agent-rx/ai-sdk without the AI SDK, and agent-rx still loads', async () => {
    const bare = join(work, 'consumer-without-peers');
    mkdirSync(join(bare, 'node_modules/@agentclientprotocol'), { recursive: true });
    mkdirSync(join(bare, 'node_modules/@modelcontextprotocol'), { recursive: true });
    cpSync(unpacked, join(bare, 'node_modules/agent-rx'), { recursive: true });
    for (const name of RUNTIME_PACKAGES.filter((name) => !['bullmq', 'ioredis', '@opentelemetry/api', 'ai', '@ai-sdk/provider'].includes(name))) symlinkSync(join(ROOT, 'node_modules', name), join(bare, 'node_modules', name), 'dir');
    writeFileSync(join(bare, 'package.json'), JSON.stringify({ name: 'consumer-without-peers', private: true, type: 'module' }));
    const script = join(bare, 'fleet.mjs');
    writeFileSync(
      script,
      [
        "const { runPi } = await import('agent-rx');",
        "const fleet = await import('agent-rx/fleet').then(() => 'loaded', (error) => error.message);",
        'console.log(JSON.stringify([typeof runPi, fleet]));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, [script], { cwd: bare });
    expect(JSON.parse(stdout)).toEqual(['function', 'agent-rx/fleet needs the optional packages bullmq and ioredis: npm install bullmq ioredis (bullmq and ioredis cannot be found from agent-rx)']);
    writeFileSync(script, ["const otel = await import('agent-rx/otel').then(() => 'loaded', (error) => error.message);", 'console.log(JSON.stringify(otel));'].join('\n'));
    const otel = await run(process.execPath, [script], { cwd: bare });
    expect(JSON.parse(otel.stdout)).toBe('agent-rx/otel needs the optional package @opentelemetry/api: npm install @opentelemetry/api (it cannot be found from agent-rx)');
    writeFileSync(script, ["const sdk = await import('agent-rx/ai-sdk').then(() => 'loaded', (error) => error.message);", 'console.log(JSON.stringify(sdk));'].join('\n'));
    const sdk = await run(process.execPath, [script], { cwd: bare });
    expect(JSON.parse(sdk.stdout)).toBe('agent-rx/ai-sdk needs the optional packages ai and @ai-sdk/provider: npm install ai @ai-sdk/provider (@ai-sdk/provider and ai cannot be found from agent-rx)');
  });

  it('resolves the types of the three entry points under NodeNext', async () => {
    writeFileSync(
      join(consumer, 'consumer.ts'),
      [
        "import type { Observable } from 'rxjs';",
        "import { runPi, type CliMessage } from 'agent-rx';",
        "import { retryAgentRun } from 'agent-rx/browser';",
        "import { createRunDispatcher, type RunSpec } from 'agent-rx/fleet';",
        "export const run: Observable<CliMessage> = runPi({ prompt: 'hello' }).pipe(retryAgentRun());",
        "export const spec: RunSpec = { agent: 'pi', options: { prompt: 'hello' } };",
        'export const dispatch: typeof createRunDispatcher = createRunDispatcher;',
        '// @ts-expect-error: a run needs a prompt',
        'runPi({});',
      ].join('\n'),
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [], typeRoots: [join(ROOT, 'node_modules/@types')] },
        files: ['consumer.ts'],
      }),
    );
    expect(existsSync(join(unpacked, 'dist/fleet.d.ts'))).toBe(true);
    const checked = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--traceResolution'], { cwd: consumer, maxBuffer: 256 * 1024 * 1024 }).catch(
      (error: unknown) => error as { stdout: string; code: number },
    );
    const resolved = new Map<string, string>();
    for (const match of checked.stdout.matchAll(/======== Module name '(agent-rx(?:\/\w+)?)' was successfully resolved to '([^']+)'/g)) {
      resolved.set(match[1] ?? '', dirname(match[2] ?? '') === join(unpacked, 'dist') ? posix.basename(match[2] ?? '') : (match[2] ?? ''));
    }
    expect(Object.fromEntries(resolved)).toEqual({ 'agent-rx': 'index.d.ts', 'agent-rx/browser': 'browser.d.ts', 'agent-rx/fleet': 'fleet.d.ts' });
    expect(checked.stdout.split('\n').filter((line) => line.includes('error TS'))).toEqual([]);
  });
});
