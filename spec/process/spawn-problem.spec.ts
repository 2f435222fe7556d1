import { afterAll, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnProblem, withSpawnProblem } from '../../lib/process/spawn-problem.js';

// What the file system says about a program that could not be started, in a folder of its own.
const dir = mkdtempSync(join(tmpdir(), 'agent-rx-spawn-problem-'));
const script = join(dir, 'agent.mjs');
const runnable = join(dir, 'runnable.mjs');
const folder = join(dir, 'folder');
writeFileSync(script, '#!/usr/bin/env node\n');
chmodSync(script, 0o644);
writeFileSync(runnable, '#!/usr/bin/env node\n');
chmodSync(runnable, 0o755);
mkdirSync(folder);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('spawnProblem', () => {
  it('a bare name was looked up on PATH', () => {
    expect(spawnProblem('pi', undefined)).toEqual({ kind: 'not-on-path', program: 'pi' });
  });

  it('a path: missing, not executable, a directory, or nothing wrong to see', () => {
    expect(spawnProblem(join(dir, 'nope'), undefined)).toEqual({ kind: 'missing', path: join(dir, 'nope') });
    expect(spawnProblem(script, undefined)).toEqual({ kind: 'not-executable', path: script });
    expect(spawnProblem(folder, undefined)).toEqual({ kind: 'directory', path: folder });
    expect(spawnProblem(runnable, undefined)).toBeUndefined();
  });

  it('a relative path is the run folder’s, as the child resolves it', () => {
    expect(spawnProblem('./agent.mjs', dir)).toEqual({ kind: 'not-executable', path: script });
    expect(spawnProblem('folder/nope', dir)).toEqual({ kind: 'missing', path: join(folder, 'nope') });
  });

  it('a working directory that is missing or a file comes first, whatever the program', () => {
    expect(spawnProblem('pi', join(dir, 'gone'))).toEqual({ kind: 'missing-cwd', cwd: join(dir, 'gone') });
    expect(spawnProblem(script, runnable)).toEqual({ kind: 'cwd-not-directory', cwd: runnable });
  });
});

describe('withSpawnProblem', () => {
  it('adds the problem to a spawn failure with ENOENT, EACCES or ENOTDIR, and leaves any other as it is', () => {
    const eacces = { stage: 'spawn', code: 'EACCES', message: `spawn ${script} EACCES` } as const;
    expect(withSpawnProblem(eacces, script, undefined)).toEqual({ ...eacces, problem: { kind: 'not-executable', path: script } });
    const other = { stage: 'spawn', code: 'E2BIG', message: 'spawn E2BIG' } as const;
    expect(withSpawnProblem(other, script, undefined)).toBe(other);
    const setup = { stage: 'setup', code: 'ENOENT', message: 'no overlay' } as const;
    expect(withSpawnProblem(setup, 'pi', undefined)).toBe(setup);
    const interpreter = { stage: 'spawn', code: 'ENOENT', message: `spawn ${runnable} ENOENT` } as const;
    expect(withSpawnProblem(interpreter, runnable, undefined)).toBe(interpreter);
  });
});
