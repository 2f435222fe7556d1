import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import { claudeExecutable } from '../../../lib/agents/claude/executable.js';
import { findExecutable } from '../../../lib/agents/shared/setup/find-executable.js';
import { runClaudeCode, stopAllRuns, type CliMessage } from '../../../lib/index.js';

const findClaudeExecutable = (env: Readonly<Record<string, string | undefined>>) => findExecutable(claudeExecutable, env);
import { createClaudeEnv, type ClaudeEnv } from '../../conformance/claude-env.js';
import { expectedText, startFakeModelServer, type FakeModelServer } from '../../conformance/fake-model-server.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

// The platform package npm installs for this machine, as Claude Code's own launcher names it.
function platformPackage(): string {
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  const musl = process.platform === 'linux' && report.header?.glibcVersionRuntime === undefined;
  return `@anthropic-ai/claude-code-${process.platform}-${process.arch}${musl ? '-musl' : ''}`;
}

function platformBinary(): string | undefined {
  try {
    const packageJson = createRequire(join(ROOT, 'package.json')).resolve(`${platformPackage()}/package.json`);
    return join(dirname(packageJson), process.platform === 'win32' ? 'claude.exe' : 'claude');
  } catch {
    return undefined;
  }
}

const BINARY = platformBinary();
if (BINARY === undefined) console.warn(`skipped: ${platformPackage()} is not installed here (no Claude Code binary for ${process.platform}-${process.arch})`);
const withBinary = BINARY !== undefined && existsSync(BINARY) ? describe : describe.skip;

withBinary(`Claude Code's executable (${platformPackage()} installed)`, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-claude-exe-'));
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it("finds the platform package's native binary, not the package's bin stub, whatever PATH holds", () => {
    expect(findClaudeExecutable({ PATH: '' })).toEqual({ command: BINARY, args: [], foundBy: 'package' });
    // node_modules/.bin/claude links to the package's bin/claude.exe: a shell stub when its install script did not run.
    expect(findClaudeExecutable({ PATH: join(ROOT, 'node_modules/.bin') })).toEqual({ command: BINARY, args: [], foundBy: 'package' });
  });

  it('a `claude` linked on PATH from somewhere else is not chosen over the package', () => {
    const dir = join(scratch, 'bin');
    mkdirSync(dir);
    symlinkSync('/bin/true', join(dir, 'claude'));
    expect(findClaudeExecutable({ PATH: dir }).foundBy).toBe('package');
    expect(realpathSync(findClaudeExecutable({ PATH: dir }).command)).toBe(realpathSync(BINARY ?? ''));
  });
});

// The real CLI against the fake model server: runClaudeCode without `executable` starts the binary found.
withBinary('runClaudeCode without `executable`', () => {
  let server: FakeModelServer;
  let env: ClaudeEnv;
  beforeAll(async () => {
    server = await startFakeModelServer();
    env = createClaudeEnv({ baseUrl: server.baseUrl });
  });
  afterAll(async () => {
    await stopAllRuns();
    await server.close();
    await env.cleanup();
  });

  it('runs the native binary it finds, with node_modules/.bin (the stub) first on PATH', async () => {
    const path = `${join(ROOT, 'node_modules/.bin')}:${process.env['PATH'] ?? ''}`;
    const messages: CliMessage[] = await lastValueFrom(
      runClaudeCode({ prompt: 'Scenario text please', model: 'text', cwd: env.cwd, env: { ...env.env, PATH: path }, timeoutMs: 60_000 }).pipe(toArray()),
    );
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    expect(messages.filter((message) => message.type === 'assistant').map((message) => message.text).join('')).toBe(expectedText('text'));
  }, 90_000);
});
