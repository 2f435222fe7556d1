import { describe, expect, it } from '@jest/globals';
import { transition, type StopEffect, type StopInput, type StopState } from '../../lib/process/stop-machine.js';

type Row = [StopState, StopInput['type'], StopState, StopEffect['type'][]];

const table: Row[] = [
  ['running', 'stop', 'recording', ['recordTree']],
  ['running', 'rootExited', 'reaping', ['killSurvivors']],
  ['running', 'graceElapsed', 'running', []],
  ['running', 'confirmed', 'running', []],
  ['recording', 'treeRecorded', 'interrupting', ['interrupt', 'startGraceTimer']],
  ['recording', 'rootExited', 'reaping', ['killSurvivors']],
  ['recording', 'stop', 'recording', []],
  ['interrupting', 'graceElapsed', 'killing', ['killTree']],
  ['interrupting', 'rootExited', 'reaping', ['clearGraceTimer', 'killSurvivors']],
  ['interrupting', 'stop', 'interrupting', []],
  ['killing', 'rootExited', 'killing', []],
  ['killing', 'graceElapsed', 'killing', []],
  ['killing', 'confirmed', 'stopped', ['finish']],
  ['killing', 'confirmTimeout', 'stopped', ['finish']],
  ['reaping', 'treeRecorded', 'reaping', []],
  ['reaping', 'stop', 'reaping', []],
  ['reaping', 'confirmed', 'stopped', ['finish']],
  ['reaping', 'confirmTimeout', 'stopped', ['finish']],
  ['stopped', 'stop', 'stopped', []],
  ['stopped', 'rootExited', 'stopped', []],
];

describe('stop state machine', () => {
  it.each(table)('in %s, on %s, goes to %s with effects %j', (from, input, to, effects) => {
    const next = transition(from, { type: input });
    expect(next.state).toBe(to);
    expect(next.effects.map((effect) => effect.type)).toEqual(effects);
  });

  it('says whether the kill was confirmed when it finishes', () => {
    expect(transition('killing', { type: 'confirmed' }).effects).toEqual([{ type: 'finish', confirmed: true }]);
    expect(transition('reaping', { type: 'confirmTimeout' }).effects).toEqual([{ type: 'finish', confirmed: false }]);
  });

  it('reaches stopped from every state through its normal inputs, never twice', () => {
    const paths: StopInput['type'][][] = [
      ['stop', 'treeRecorded', 'graceElapsed', 'rootExited', 'confirmed'],
      ['stop', 'treeRecorded', 'rootExited', 'confirmed'],
      ['stop', 'rootExited', 'treeRecorded', 'confirmed'],
      ['rootExited', 'stop', 'confirmed'],
    ];
    for (const path of paths) {
      let state: StopState = 'running';
      let finishes = 0;
      for (const input of path) {
        const next = transition(state, { type: input });
        state = next.state;
        finishes += next.effects.filter((effect) => effect.type === 'finish').length;
      }
      expect(state).toBe('stopped');
      expect(finishes).toBe(1);
    }
  });
});
