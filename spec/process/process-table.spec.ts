import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { ProcessEntry } from '../../lib/process/process-entry.js';
import { parseStat } from '../../lib/process/proc-stat.js';
import { readProcessTable, readProcessTableSync } from '../../lib/process/process-table.js';
import { parsePs, readPsTable } from '../../lib/process/ps-table.js';
import { runMembers } from '../../lib/process/run-members.js';

const entry = (pid: number, ppid: number, pgid: number, extra: Partial<ProcessEntry> = {}): ProcessEntry => ({
  pid,
  ppid,
  pgid,
  startTime: String(pid * 10),
  zombie: false,
  marked: false,
  ...extra,
});

describe('process table', () => {
  it('parses a stat line whose command holds spaces and parentheses', () => {
    const line = '4242 (we ird) (x)) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3\n';
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 17, pgid: 4242, startTime: '987654', zombie: false, marked: false });
    expect(parseStat('99 (z) Z 1 99 99 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0')?.zombie).toBe(true);
    expect(parseStat('garbage')).toBeNull();
  });

  it('parses ps output and skips malformed rows', () => {
    expect(parsePs('  10   1  10 Ss\n 11 10 10 Z+\nnonsense\n')).toEqual([
      { pid: 10, ppid: 1, pgid: 10, startTime: '', zombie: false, marked: false },
      { pid: 11, ppid: 10, pgid: 10, startTime: '', zombie: true, marked: false },
    ]);
  });

  it('reads a table that contains this process and its parent', async () => {
    const table = await readProcessTable();
    expect(table.error).toBeNull();
    const self = table.entries.find((row) => row.pid === process.pid);
    expect(self?.ppid).toBe(process.ppid);
  });

  it('gives an empty table with a reason, not a crash, when ps is missing', async () => {
    const table = await readPsTable('/nonexistent-directory/ps');
    expect(table.entries).toEqual([]);
    expect(table.error).toMatch(/cannot run ps/);
  });

  it('finds descendants, group members, marked processes and known pids, but not strangers', () => {
    const root = 100;
    const table = [
      entry(100, 1, 100),
      entry(101, 100, 100), // child
      entry(102, 101, 102), // grandchild in its own session
      entry(103, 1, 100), // reparented, still in the group
      entry(104, 1, 104, { marked: true }), // escaped, carries the marker
      entry(105, 1, 105), // known from an earlier snapshot
      entry(106, 105, 106), // its child
      entry(107, 1, 107), // stranger
      entry(108, 1, 108, { startTime: 'other' }), // known pid, reused by another process
      entry(109, 100, 100, { zombie: true }), // dead
    ];
    const known = new Map([
      [105, '1050'],
      [108, '1080'],
    ]);
    expect([...runMembers(table, { pid: root, startTime: '1000' }, known).keys()].sort()).toEqual([101, 102, 103, 104, 105, 106]);
  });

  it("takes a member of the root's process group only when it started at or after the root (a reused group id)", () => {
    const table = [
      entry(200, 1, 200, { startTime: '5000' }), // the root
      entry(201, 1, 200, { startTime: '4999' }), // in a group numbered like the root's, but older: not the run's
      entry(202, 1, 200, { startTime: '5000' }), // started with the root
      entry(203, 1, 200, { startTime: '6000' }), // started later
    ];
    expect([...runMembers(table, { pid: 200, startTime: '5000' }, new Map()).keys()].sort()).toEqual([202, 203]);
    // Where start times are unknown (ps), group membership alone decides.
    expect([...runMembers(table, { pid: 200, startTime: '' }, new Map()).keys()].sort()).toEqual([201, 202, 203]);
  });

  it('reads the table synchronously too, flagging the processes whose environment holds a token', () => {
    const token = `[test-${process.pid}.1]`;
    const table = readProcessTableSync(token);
    expect(table.error).toBeNull();
    expect(table.entries.find((row) => row.pid === process.pid)).toMatchObject({ ppid: process.ppid, marked: false });
  });

  it('flags a process whose environment holds the token, even past a large environment, async and sync', async () => {
    const token = `[test-${process.pid}.2]`;
    // 200 kB of environment before the marker (one string may hold 128 kB): read whole, not just a first page or buffer.
    const filler = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`AAA_FILLER_${i}`, 'x'.repeat(50_000)]));
    const env = { ...process.env, ...filler, ZZZ_MARKER: token };
    const child = spawn(process.execPath, ['-e', "process.stdout.write('up'); setInterval(() => {}, 1000)"], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await once(child.stdout, 'data');
      const pid = child.pid as number;
      expect((await readProcessTable(token)).entries.find((row) => row.pid === pid)?.marked).toBe(true);
      expect(readProcessTableSync(token).entries.find((row) => row.pid === pid)?.marked).toBe(true);
      expect((await readProcessTable(`[test-${process.pid}.3]`)).entries.find((row) => row.pid === pid)?.marked).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
