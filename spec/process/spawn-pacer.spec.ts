import { describe, expect, it } from '@jest/globals';
import { SpawnPacer } from '../../lib/process/spawn-pacer.js';

/** A pacer on a fake clock: every spawn takes `costMs`; turns run when the test says so. */
function fakePacer(budgetMs: number, costMs: number) {
  let now = 0;
  const turns: (() => void)[] = [];
  const pacer = new SpawnPacer(
    budgetMs,
    () => now,
    (turn) => {
      turns.push(turn);
    },
  );
  const spawned: string[] = [];
  const spawn = (name: string) => () => {
    now += costMs;
    spawned.push(name);
  };
  /** Runs the pending turn; returns what it spawned. */
  const turn = (): string[] => {
    const before = spawned.length;
    const next = turns.shift();
    if (next === undefined) throw new Error('no turn is scheduled');
    next();
    return spawned.slice(before);
  };
  return { pacer, spawn, spawned, turn, turns };
}

describe('SpawnPacer', () => {
  it('spawns at once while the turn has budget, then one turn-budget of spawns per later turn, in order', () => {
    const { pacer, spawn, spawned, turn } = fakePacer(8, 3);
    const withdraws = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((name) => pacer.pace(spawn(name)));
    // 0 ms, 3 ms, 6 ms spent: a, b, c fit; from 9 ms on the rest wait.
    expect(spawned).toEqual(['a', 'b', 'c']);
    expect(withdraws.map((withdraw) => withdraw === null)).toEqual([true, true, true, false, false, false, false]);
    expect(pacer.waiting).toBe(4);
    expect(turn()).toEqual(['d', 'e', 'f']);
    expect(turn()).toEqual(['g']);
    expect(pacer.waiting).toBe(0);
  });

  it('a lone spawn runs synchronously, and a new turn gives the budget back', () => {
    const { pacer, spawn, spawned, turn } = fakePacer(8, 10);
    expect(pacer.pace(spawn('a'))).toBeNull();
    expect(spawned).toEqual(['a']);
    // Over budget: the next one waits for the next turn.
    expect(pacer.pace(spawn('b'))).not.toBeNull();
    expect(spawned).toEqual(['a']);
    expect(turn()).toEqual(['b']);
    // That turn spent 10 ms; after one more turn with nothing waiting, a spawn runs at once again.
    turn();
    expect(pacer.pace(spawn('c'))).toBeNull();
    expect(spawned).toEqual(['a', 'b', 'c']);
  });

  it('a withdrawn spawn never runs; the others keep their order', () => {
    const { pacer, spawn, spawned, turn } = fakePacer(1, 2);
    pacer.pace(spawn('a'));
    const b = pacer.pace(spawn('b'));
    pacer.pace(spawn('c'));
    b?.();
    expect(pacer.waiting).toBe(1);
    expect(turn()).toEqual(['c']);
    expect(spawned).toEqual(['a', 'c']);
  });

  it('a spawn that throws still counts against the budget, and the pacer goes on', () => {
    const { pacer, spawn, spawned, turn } = fakePacer(8, 9);
    const failing = spawn('boom');
    expect(() =>
      pacer.pace(() => {
        failing();
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(pacer.pace(spawn('a'))).not.toBeNull();
    expect(turn()).toEqual(['a']);
    expect(spawned).toEqual(['boom', 'a']);
  });
});
