import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { qwenAgent } from '../../../lib/index.js';
import { findExecutable } from '../../../lib/agents/shared/setup/find-executable.js';

const packageDir = dirname(createRequire(import.meta.url).resolve('@qwen-code/qwen-code/package.json'));

describe("Qwen Code's program", () => {
  it('is the package’s cli.js run by this Node, not its launcher (a second process that does not pass signals on)', () => {
    expect(findExecutable(qwenAgent.executable, { PATH: '' })).toEqual({ command: process.execPath, args: [join(packageDir, 'cli.js')], pathDir: undefined, foundBy: 'package' });
  });

  it('is, for a package this library cannot resolve, the script of the package whose launcher is on PATH; another program on PATH runs as it is', () => {
    const root = mkdtempSync(join(tmpdir(), 'agent-rx-script-'));
    try {
      const pkg = join(root, 'lib', 'node_modules', 'some-agent-cli');
      const bin = join(root, 'bin');
      const other = join(root, 'other');
      for (const dir of [pkg, bin, other]) mkdirSync(dir, { recursive: true });
      writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'some-agent-cli', bin: { 'some-agent': 'launcher.js' } }));
      writeFileSync(join(pkg, 'launcher.js'), '#!/usr/bin/env node\n', { mode: 0o755 });
      writeFileSync(join(pkg, 'cli.js'), '');
      symlinkSync(join(pkg, 'launcher.js'), join(bin, 'some-agent'));
      writeFileSync(join(other, 'some-agent'), '#!/bin/sh\n', { mode: 0o755 });
      const lookup = { names: ['some-agent'], script: { packageName: 'some-agent-cli', entry: 'cli.js' } };
      expect(findExecutable(lookup, { PATH: bin })).toEqual({ command: process.execPath, args: [join(pkg, 'cli.js')], pathDir: undefined, foundBy: 'path' });
      expect(findExecutable(lookup, { PATH: other })).toEqual({ command: join(other, 'some-agent'), args: [], pathDir: undefined, foundBy: 'path' });
      expect(findExecutable(lookup, { PATH: '' })).toEqual({ command: 'some-agent', args: [], pathDir: undefined, foundBy: 'none' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
