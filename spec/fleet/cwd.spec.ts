import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowWorkingDirectories, workerFolderOnly } from '../../lib/fleet.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agent-rx-cwd-')));
const work = join(scratch, 'work');
const other = join(scratch, 'other');
mkdirSync(join(work, 'repo'), { recursive: true });
mkdirSync(other);
symlinkSync(other, join(work, 'escape'));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('allowWorkingDirectories', () => {
  const resolve = allowWorkingDirectories([work]);

  it('gives the first folder to a run that asks for none, and allows a folder inside it', () => {
    expect(resolve(undefined)).toBe(work);
    expect(resolve(join(work, 'repo'))).toBe(join(work, 'repo'));
    expect(resolve(`${work}/repo/..`)).toBe(work);
  });

  it('refuses a folder outside, one reached through .. or a symbolic link, and one that does not exist', () => {
    expect(() => resolve(other)).toThrow(/is not one this worker allows/);
    expect(() => resolve(`${work}/../other`)).toThrow(/is not one this worker allows/);
    expect(() => resolve(join(work, 'escape'))).toThrow(/is not one this worker allows/);
    expect(() => resolve(`${work}-sibling`)).toThrow(/does not exist/);
    expect(() => resolve(join(work, 'missing'))).toThrow(/does not exist/);
  });

  it('needs folders that exist', () => {
    expect(() => allowWorkingDirectories([])).toThrow(TypeError);
    expect(() => allowWorkingDirectories([join(scratch, 'nope')])).toThrow(/does not exist/);
  });
});

describe('workerFolderOnly', () => {
  it('runs in the worker folder and refuses any requested one', () => {
    expect(workerFolderOnly(undefined)).toBe(process.cwd());
    expect(() => workerFolderOnly(process.cwd())).toThrow(/allows none/);
  });
});
