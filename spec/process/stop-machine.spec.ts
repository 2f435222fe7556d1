import { describe, expect, it } from '@jest/globals';
import { INITIAL_STOP_STATE, transition, type StopEffect, type StopInput, type StopPhase, type StopRequest, type StopState } from '../../lib/process/stop-machine.js';

type InputType = StopInput['type'];
type Row = [StopPhase, InputType, StopPhase, StopEffect['type'][]];

const UNSUBSCRIBE: StopRequest = { kind: 'unsubscribe' };
const HOST: StopRequest = { kind: 'host' };
const input = (type: InputType, request: StopRequest = UNSUBSCRIBE): StopInput => (type === 'stop' ? { type, request } : { type });
const inPhase = (phase: StopPhase): StopState => ({ ...INITIAL_STOP_STATE, phase });

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

function walk(inputs: readonly StopInput[], from: StopState = INITIAL_STOP_STATE): { state: StopState; effects: StopEffect[] } {
  let state = from;
  const effects: StopEffect[] = [];
  for (const next of inputs) {
    const result = transition(state, next);
    state = result.state;
    effects.push(...result.effects);
  }
  return { state, effects };
}

describe('stop state machine', () => {
  it.each(table)('in %s, on %s, goes to %s with effects %j', (from, type, to, effects) => {
    const next = transition(inPhase(from), input(type));
    expect(next.state.phase).toBe(to);
    expect(next.effects.map((effect) => effect.type)).toEqual(effects);
  });

  it('says whether the kill was confirmed when it finishes', () => {
    expect(transition(inPhase('killing'), { type: 'confirmed' }).effects).toEqual([{ type: 'finish', confirmed: true }]);
    expect(transition(inPhase('reaping'), { type: 'confirmTimeout' }).effects).toEqual([{ type: 'finish', confirmed: false }]);
  });

  it('reaches stopped from every state through its normal inputs, never twice', () => {
    const paths: InputType[][] = [
      ['stop', 'treeRecorded', 'graceElapsed', 'rootExited', 'confirmed'],
      ['stop', 'treeRecorded', 'rootExited', 'confirmed'],
      ['stop', 'rootExited', 'treeRecorded', 'confirmed'],
      ['rootExited', 'stop', 'confirmed'],
    ];
    for (const path of paths) {
      const { state, effects } = walk(path.map((type) => input(type)));
      expect(state.phase).toBe('stopped');
      expect(effects.filter((effect) => effect.type === 'finish')).toHaveLength(1);
    }
  });

  it('keeps the first stop request, taken only while the root still ran', () => {
    const timeout: StopRequest = { kind: 'timeout', limit: 'idle', ms: 100 };
    expect(walk([input('stop', timeout), input('stop', HOST), input('stop', UNSUBSCRIBE)]).state.request).toEqual(timeout);
    // The root exited by itself first: a later stop does not make it a stopped run.
    expect(walk([input('rootExited'), input('stop', HOST)]).state.request).toBeNull();
  });

  it('records whether the root exited, and whether it did within the grace period', () => {
    const graceful = walk(['stop', 'treeRecorded', 'rootExited', 'confirmed'].map((type) => input(type as InputType))).state;
    expect(graceful).toMatchObject({ rootExited: true, exitedGracefully: true });
    const killed = walk(['stop', 'treeRecorded', 'graceElapsed', 'rootExited', 'confirmed'].map((type) => input(type as InputType))).state;
    expect(killed).toMatchObject({ rootExited: true, exitedGracefully: false });
    const byItself = walk([input('rootExited'), input('confirmed')]).state;
    expect(byItself).toMatchObject({ rootExited: true, exitedGracefully: false, request: null });
    expect(walk([input('stop'), input('treeRecorded'), input('graceElapsed')]).state.rootExited).toBe(false);
  });
});
