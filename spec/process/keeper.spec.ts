import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEEPER_SCRIPT } from '../../lib/process/signals.js';
import { isAlive, killLeftovers, startedPids } from '../helpers/processes.js';

const linux = process.platform === 'linux';
const scratch: string[] = [];

afterEach(() => {
  killLeftovers();
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts the keeper's script with its stdin open, as a host would. */
function keeper(token: string, dir: string): ChildProcess {
  return spawn('/bin/sh', ['-c', KEEPER_SCRIPT, 'agent-rx-keeper', token, dir], { stdio: ['pipe', 'ignore', 'pipe'] });
}

/** A `sleep` in its own session, with extra environment; its pid, recorded for clean-up. */
function sleeper(env: Record<string, string>, cleanEnv = false): number {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: cleanEnv ? env : { ...process.env, ...env } });
  child.unref();
  const pid = child.pid as number;
  startedPids.add(pid);
  return pid;
}

function ignoredSignals(pid: number): bigint {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((text) => text.startsWith('SigIgn:'));
    return BigInt(`0x${line?.split(/\s+/)[1] ?? '0'}`);
  } catch {
    return 0n;
  }
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

(linux ? describe : describe.skip)('the keeper (Linux: it reads /proc)', () => {
  it('waits while its stdin is open, then kills every process carrying the token and removes the folder', async () => {
    const token = `[${randomBytes(8).toString('hex')}.`;
    const dir = mkdtempSync(join(tmpdir(), 'agent-rx-keeper-spec-'));
    scratch.push(dir);
    mkdirSync(join(dir, 'pi-x'));
    writeFileSync(join(dir, 'pi-x', 'settings.json'), '{}');
    const marked = sleeper({ AGENT_RX_RUN_ID: `${token}1]` });
    const chained = sleeper({ AGENT_RX_RUN_ID: `[outer.3]${token}2]` });
    const stranger = sleeper({ AGENT_RX_RUN_ID: '[someone-else.1]' });
    const child = keeper(token, dir);
    const exited = once(child, 'exit');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([isAlive(marked), isAlive(chained), existsSync(dir)]).toEqual([true, true, true]);
    child.stdin?.end();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(await until(() => !isAlive(marked) && !isAlive(chained))).toBe(true);
    expect(isAlive(stranger)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it('kills the process groups it was told of, even members without the token, but not groups it was told are gone', async () => {
    const token = `[${randomBytes(8).toString('hex')}.`;
    const announced = sleeper({ PATH: process.env['PATH'] ?? '' }, true);
    const withdrawn = sleeper({ PATH: process.env['PATH'] ?? '' }, true);
    const child = keeper(token, '');
    const exited = once(child, 'exit');
    child.stdin?.end(`+${announced}\n+${withdrawn}\n-${withdrawn}\n`);
    await exited;
    expect(await until(() => !isAlive(announced))).toBe(true);
    expect(isAlive(withdrawn)).toBe(true);
  });

  it('exits at once, killing nothing, when the host left nothing behind', async () => {
    const token = `[${randomBytes(8).toString('hex')}.`;
    const bystander = sleeper({});
    const child = keeper(token, '');
    const exited = once(child, 'exit');
    child.stdin?.end();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(isAlive(bystander)).toBe(true);
  });

  it('ignores the terminal signals a host shares with its session', async () => {
    const child = keeper(`[${randomBytes(8).toString('hex')}.`, '');
    const exited = once(child, 'exit');
    // Its first line ignores SIGHUP (bit 0) and SIGINT (bit 1): wait until /proc says it has.
    expect(await until(() => (ignoredSignals(child.pid as number) & 3n) === 3n)).toBe(true);
    child.kill('SIGINT');
    child.kill('SIGHUP');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(child.exitCode).toBeNull();
    child.stdin?.end();
    await exited;
  });
});
