import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import { codexExecutable } from '../../../lib/agents/codex/executable.js';
import { findExecutable } from '../../../lib/agents/shared/setup/find-executable.js';
import { runCodex, stopAllRuns, type CliMessage } from '../../../lib/index.js';

const findCodexExecutable = (env: Readonly<Record<string, string | undefined>> = process.env) => findExecutable(codexExecutable, env);

afterEach(async () => {
  await stopAllRuns();
});

const root = (path: string): string => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const vendor = 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl';
const packageVersion = (JSON.parse(readFileSync(root('node_modules/@openai/codex/package.json'), 'utf8')) as { version: string }).version;
const pinned = (JSON.parse(readFileSync(root('package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['@openai/codex'];

const CONFIG_ERROR =
  'Error loading config.toml: model_providers contains reserved built-in provider IDs: `openai`. Built-in providers cannot be overridden. Rename your custom provider (for example, `openai-custom`). in `model_providers`';

/** A Codex home of its own for a real run, removed afterwards. */
async function withCodexHome<T>(use: (home: string) => Promise<T>): Promise<T> {
  const home = mkdtempSync(join(tmpdir(), 'agent-rx-codex-home-'));
  try {
    return await use(home);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

// The devDependency carries the linux-x64 binary; other machines install another platform package.
const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64' ? describe : describe.skip;

onLinuxX64('Codex\'s executable with the @openai/codex devDependency installed', () => {
  it('finds the native binary of the platform package, and the folder of programs it ships', () => {
    const found = findCodexExecutable();
    expect(found).toEqual({
      command: realpathSync(root(`${vendor}/bin/codex`)),
      pathDir: realpathSync(root(`${vendor}/codex-path`)),
      args: [],
      foundBy: 'package',
    });
    expect(() => {
      accessSync(join(found.pathDir ?? '', 'rg'), constants.X_OK);
    }).not.toThrow();
  });

  it('prefers the package to anything on PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-rx-codex-path-'));
    try {
      const impostor = join(dir, 'codex');
      writeFileSync(impostor, '#!/bin/sh\necho impostor\n');
      chmodSync(impostor, 0o755);
      const packaged = findCodexExecutable();
      expect(findCodexExecutable({ PATH: dir })).toEqual(packaged);
      expect(findCodexExecutable({ PATH: '' })).toEqual(packaged);
      expect(findCodexExecutable({})).toEqual(packaged);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs it: --version names the installed version, the one package.json pins', () => {
    expect(pinned).toBe(packageVersion);
    expect(execFileSync(findCodexExecutable().command, ['--version'], { encoding: 'utf8', timeout: 60_000 })).toBe(`codex-cli ${packageVersion}\n`);
  });

  it('runCodex without an executable runs it: the real CLI takes every option, then stops at a configuration error', async () => {
    const messages = await withCodexHome((home) =>
      lastValueFrom(
        runCodex({
          prompt: '-say hello',
          model: 'gpt-5.5',
          provider: 'proxy',
          sandbox: 'read-only',
          approvalPolicy: 'never',
          reasoningEffort: 'low',
          // Built-in providers cannot be changed: Codex refuses this before it reads stdin or reaches any network.
          config: { model_providers: { openai: { request_max_retries: 0 } } },
          additionalDirectories: [home],
          ephemeral: true,
          session: { resume: '01a22ade-d612-7b03-8bda-b6d8516396ba' },
          cwd: home,
          env: { CODEX_HOME: home, RUST_LOG: 'warn' },
          timeoutMs: 60_000,
        }).pipe(toArray()),
      ),
    );
    expect(messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'exit', exitCode: 1, signal: null, message: `Codex exited with code 1: ${CONFIG_ERROR}` })]);
  });

  it('a flag the real CLI does not know: its own error explains the exit', async () => {
    const messages: CliMessage[] = await withCodexHome((home) =>
      lastValueFrom(runCodex({ prompt: 'p', extraArgs: ['--no-such-flag'], cwd: home, env: { CODEX_HOME: home }, timeoutMs: 60_000 }).pipe(toArray())),
    );
    expect(messages).toEqual([
      expect.objectContaining({
        type: 'terminal.failed',
        reason: 'exit',
        exitCode: 2,
        message: expect.stringMatching(/^Codex exited with code 2: error: unexpected argument '--no-such-flag' found/),
      }),
    ]);
  });
});

/**
 * The PATH branches, seen from where `@openai/codex` cannot be resolved: a copy of the shared lookup
 * and of Codex's lookup data (both import only Node's own modules, and types), in their folders,
 * with no node_modules above them, run by tsx in a child Node with a PATH of our choosing.
 */
onLinuxX64('Codex\'s executable where the package is not resolvable: PATH', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-codex-path-'));
  for (const file of ['codex/executable.ts', 'shared/setup/find-executable.ts']) {
    mkdirSync(join(scratch, dirname(file)), { recursive: true });
    writeFileSync(join(scratch, file), readFileSync(root(`lib/agents/${file}`)));
  }
  const find = (path: string): unknown => {
    const script = [
      `import { findExecutable } from ${JSON.stringify(join(scratch, 'shared/setup/find-executable.ts'))};`,
      `import { codexExecutable } from ${JSON.stringify(join(scratch, 'codex/executable.ts'))};`,
      `process.stdout.write(JSON.stringify(findExecutable(codexExecutable, { PATH: ${JSON.stringify(path)} })));`,
    ].join(' ');
    return JSON.parse(execFileSync(process.execPath, [root('node_modules/tsx/dist/cli.mjs'), '--eval', script], { cwd: scratch, encoding: 'utf8' })) as unknown;
  };
  const bin = (name: string): string => {
    const dir = join(scratch, name);
    execFileSync('mkdir', ['-p', dir]);
    return dir;
  };

  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it('nothing on PATH: plain `codex`, so that starting it fails with ENOENT and the run says how to install it', () => {
    expect(find(bin('empty'))).toEqual({ command: 'codex', args: [], foundBy: 'none' });
  });

  it('the npm launcher on PATH (a global install links bin/codex.js): the native binary of that package', () => {
    const dir = bin('global');
    execFileSync('ln', ['-s', root('node_modules/@openai/codex/bin/codex.js'), join(dir, 'codex')]);
    expect(find(`${bin('empty')}:${dir}`)).toEqual({
      command: realpathSync(root(`${vendor}/bin/codex`)),
      pathDir: realpathSync(root(`${vendor}/codex-path`)),
      args: [],
      foundBy: 'path',
    });
  });

  it('a native codex on PATH (not the launcher): that program itself', () => {
    const dir = bin('native');
    const program = join(dir, 'codex');
    writeFileSync(program, '#!/bin/sh\nexit 0\n');
    chmodSync(program, 0o755);
    expect(find(dir)).toEqual({ command: program, args: [], foundBy: 'path' });
  });

  it('a codex that is not executable, or a folder named codex, is passed over', () => {
    const dir = bin('unusable');
    writeFileSync(join(dir, 'codex'), '#!/bin/sh\n');
    const folder = bin('folder');
    execFileSync('mkdir', [join(folder, 'codex')]);
    expect(find(`${dir}:${folder}`)).toMatchObject({ command: 'codex', args: [], foundBy: 'none' });
  });
});
