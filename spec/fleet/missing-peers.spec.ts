import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/tagged-child.js';

// The sources copied into a folder whose node_modules holds the library's own dependencies but not
// the fleet's optional peers: there bullmq (or ioredis) really cannot be resolved.

const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const DEPENDENCIES = ['rxjs', 'zod', 'execa', '@agentclientprotocol/sdk'];
const NEEDS = 'agent-rx/fleet needs the optional packages bullmq and ioredis: npm install bullmq ioredis';

let work = '';

/** A copy of `lib/` with these packages beside it. */
function project(name: string, packages: readonly string[]): string {
  const folder = join(work, name);
  mkdirSync(join(folder, 'node_modules/@agentclientprotocol'), { recursive: true });
  cpSync(join(ROOT, 'lib'), join(folder, 'lib'), { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  for (const dependency of packages) symlinkSync(join(ROOT, 'node_modules', dependency), join(folder, 'node_modules', dependency), 'dir');
  return folder;
}

function node(folder: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', TSX, ...args], { cwd: folder, env: { ...process.env, TSX_DISABLE_CACHE: '1', NO_COLOR: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

/** What importing the fleet's entry point in `folder` throws. */
async function importError(folder: string): Promise<{ message: string; code?: string }> {
  const script = "try { await import('./lib/fleet.ts'); console.log('{}'); } catch (error) { console.log(JSON.stringify({ message: error.message, code: error.code })); }";
  const { stdout, stderr } = await node(folder, ['--input-type=module', '-e', script]);
  if (stdout === '') throw new Error(`no answer; stderr:\n${stderr}`);
  return JSON.parse(stdout) as { message: string; code?: string };
}

let neither = '';
let bullmqOnly = '';

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'agent-rx-peers-'));
  neither = project('neither', DEPENDENCIES);
  bullmqOnly = project('bullmq-only', [...DEPENDENCIES, 'bullmq']);
});

afterAll(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

describe('agent-rx/fleet without its optional peers', () => {
  it('fails to import with what to install, naming what is missing, not with a bare ERR_MODULE_NOT_FOUND', async () => {
    expect(await importError(neither)).toEqual({ message: `${NEEDS} (bullmq and ioredis cannot be found from agent-rx)` });
    expect(await importError(bullmqOnly)).toEqual({ message: `${NEEDS} (ioredis cannot be found from agent-rx)` });
  });

  it('gives the command line the same message: worker exits 1 with it, run --fleet ends setup with it', async () => {
    const message = `${NEEDS} (bullmq and ioredis cannot be found from agent-rx)`;
    const worker = await node(neither, ['lib/cli/main.ts', 'worker', '--redis', 'redis://127.0.0.1:1']);
    expect({ code: worker.code, stderr: worker.stderr }).toEqual({ code: 1, stderr: `agent-rx worker: ${message}\n` });
    const run = await node(neither, ['lib/cli/main.ts', 'run', '--fleet', 'redis://127.0.0.1:1', '--json', 'hi']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.trimEnd().split('\n').at(-1) ?? '{}')).toMatchObject({ type: 'terminal.failed', reason: 'setup', message });
  });
});
