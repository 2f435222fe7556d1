import type { StopCause } from './items.js';

/**
 * The stop sequence as a pure state machine: `transition(state, input)` returns the next state and
 * the effects a shell must carry out, in order. No timers, signals or processes in here. The state
 * is the only record of where a run's stop stands: why it was asked for, whether the root exited,
 * and how.
 *
 *   running ──stop──► recording ──treeRecorded──► interrupting ──graceElapsed──► killing
 *      │                  │                            │                           │
 *      └──rootExited──────┴────────rootExited──────────┴──────► reaping            │
 *                                                                  │               │
 *                                        confirmed | confirmTimeout└──► stopped ◄──┘
 */
export type StopPhase = 'running' | 'recording' | 'interrupting' | 'killing' | 'reaping' | 'stopped';

/** Why a stop is asked for: the subscriber left, or the library stops a run it still delivers. */
export type StopRequest = { readonly kind: 'unsubscribe' } | StopCause;

export interface StopState {
  readonly phase: StopPhase;
  /** The first stop request, taken while the root still ran; `null` when the root exited by itself. */
  readonly request: StopRequest | null;
  readonly rootExited: boolean;
  /** The root exited after the interrupt, within the grace period (no SIGKILL was needed for it). */
  readonly exitedGracefully: boolean;
}

export const INITIAL_STOP_STATE: StopState = { phase: 'running', request: null, rootExited: false, exitedGracefully: false };

export type StopInput =
  /** The subscriber left, the host asked for it (`stopAllRuns`), or a time limit ran out. */
  | { readonly type: 'stop'; readonly request: StopRequest }
  /** The snapshot of the process tree was taken. */
  | { readonly type: 'treeRecorded' }
  /** The root process exited, by itself or because of a signal. */
  | { readonly type: 'rootExited' }
  /** The grace period after the interrupt ran out. */
  | { readonly type: 'graceElapsed' }
  /** Every process of the run is gone. */
  | { readonly type: 'confirmed' }
  /** The kill could not be confirmed in time. */
  | { readonly type: 'confirmTimeout' };

export type StopEffect =
  /** Snapshot the root's descendants, then report `treeRecorded`. */
  | { readonly type: 'recordTree' }
  /** Send the graceful interrupt (signal and/or stdin bytes) to the root. */
  | { readonly type: 'interrupt' }
  | { readonly type: 'startGraceTimer' }
  | { readonly type: 'clearGraceTimer' }
  /**
   * SIGKILL the root, its process group and every recorded or newly found descendant, then watch
   * until all are gone (`confirmed`) or the kill timeout ends (`confirmTimeout`).
   */
  | { readonly type: 'killTree' }
  /** Like `killTree`, for whatever of the run outlived its root. */
  | { readonly type: 'killSurvivors' }
  /** The sequence is over; release resources and settle whoever awaits it. */
  | { readonly type: 'finish'; readonly confirmed: boolean };

export interface Transition {
  readonly state: StopState;
  readonly effects: readonly StopEffect[];
}

const stay = (state: StopState): Transition => ({ state, effects: [] });
const to = (state: StopState, phase: StopPhase, effects: readonly StopEffect[], change: Partial<StopState> = {}): Transition => ({
  state: { ...state, ...change, phase },
  effects,
});

export function transition(state: StopState, input: StopInput): Transition {
  switch (state.phase) {
    case 'running':
      if (input.type === 'stop') return to(state, 'recording', [{ type: 'recordTree' }], { request: input.request });
      if (input.type === 'rootExited') return to(state, 'reaping', [{ type: 'killSurvivors' }], { rootExited: true });
      return stay(state);
    case 'recording':
      if (input.type === 'treeRecorded') return to(state, 'interrupting', [{ type: 'interrupt' }, { type: 'startGraceTimer' }]);
      if (input.type === 'rootExited') return to(state, 'reaping', [{ type: 'killSurvivors' }], { rootExited: true });
      return stay(state);
    case 'interrupting':
      if (input.type === 'graceElapsed') return to(state, 'killing', [{ type: 'killTree' }]);
      if (input.type === 'rootExited') {
        return to(state, 'reaping', [{ type: 'clearGraceTimer' }, { type: 'killSurvivors' }], { rootExited: true, exitedGracefully: true });
      }
      return stay(state);
    case 'killing':
    case 'reaping':
      if (input.type === 'rootExited') return to(state, state.phase, [], { rootExited: true });
      if (input.type === 'confirmed') return to(state, 'stopped', [{ type: 'finish', confirmed: true }]);
      if (input.type === 'confirmTimeout') return to(state, 'stopped', [{ type: 'finish', confirmed: false }]);
      return stay(state);
    case 'stopped':
      if (input.type === 'rootExited') return to(state, 'stopped', [], { rootExited: true });
      return stay(state);
  }
}
