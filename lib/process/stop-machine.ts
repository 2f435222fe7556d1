/**
 * The stop sequence as a pure state machine: `transition(state, input)` returns the next state and
 * the effects a shell must carry out, in order. No timers, signals or processes in here.
 *
 *   running ──stop──► recording ──treeRecorded──► interrupting ──graceElapsed──► killing
 *      │                  │                            │                           │
 *      └──rootExited──────┴────────rootExited──────────┴──────► reaping            │
 *                                                                  │               │
 *                                        confirmed | confirmTimeout└──► stopped ◄──┘
 */
export type StopState = 'running' | 'recording' | 'interrupting' | 'killing' | 'reaping' | 'stopped';

export type StopInput =
  /** The subscriber left (or a host shutdown asked for it). */
  | { readonly type: 'stop' }
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

export function transition(state: StopState, input: StopInput): Transition {
  switch (state) {
    case 'running':
      if (input.type === 'stop') return { state: 'recording', effects: [{ type: 'recordTree' }] };
      if (input.type === 'rootExited') return reap();
      return stay(state);
    case 'recording':
      if (input.type === 'treeRecorded') {
        return { state: 'interrupting', effects: [{ type: 'interrupt' }, { type: 'startGraceTimer' }] };
      }
      if (input.type === 'rootExited') return reap();
      return stay(state);
    case 'interrupting':
      if (input.type === 'graceElapsed') {
        return { state: 'killing', effects: [{ type: 'killTree' }] };
      }
      if (input.type === 'rootExited') {
        return { state: 'reaping', effects: [{ type: 'clearGraceTimer' }, { type: 'killSurvivors' }] };
      }
      return stay(state);
    case 'killing':
    case 'reaping':
      if (input.type === 'confirmed') return { state: 'stopped', effects: [{ type: 'finish', confirmed: true }] };
      if (input.type === 'confirmTimeout') return { state: 'stopped', effects: [{ type: 'finish', confirmed: false }] };
      return stay(state);
    case 'stopped':
      return stay(state);
  }
}

function reap(): Transition {
  return { state: 'reaping', effects: [{ type: 'killSurvivors' }] };
}
