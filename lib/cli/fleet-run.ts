// `agent-rx run --fleet <url>`: the run dispatched to the fleet's workers instead of spawned here.
// agent-rx/fleet (bullmq, ioredis) is loaded only then.
import { Observable, type Subscription } from 'rxjs';
import type { RunDispatcher } from '../fleet.js';
import { fleetFailure } from '../fleet/failure.js';
import type { RunSpec } from '../fleet/run-spec.js';
import type { CliMessage } from '../messages.js';
import type { PermissionCallback } from '../operators/permission-policy.js';
import { errorText } from './error-text.js';

/** A fleet run for the command line: its source, and `stop` (a signal: cancel it, and end it in-band with `stopped`). */
export interface FleetRun {
  readonly source: () => Observable<CliMessage>;
  readonly stop: () => Promise<void>;
}

// Redis trouble is not reported apart: the run ends in-band with it (`setup` when Redis never
// answered, `lost` when it went away), its cause in the terminal's message. `ask` answers the
// requests of a spec with `permission: 'ask'` (`--approve ask`: on the terminal).
export function fleetRun(connection: string, spec: RunSpec, ask?: PermissionCallback): FleetRun {
  let dispatcher: RunDispatcher | null = null;
  const source = (): Observable<CliMessage> =>
    new Observable<CliMessage>((subscriber) => {
      let inner: Subscription | null = null;
      let closed = false;
      import('../fleet.js').then(
        ({ createRunDispatcher }) => {
          if (closed) return;
          dispatcher = createRunDispatcher({ connection });
          inner = dispatcher.run(spec, ask === undefined ? {} : { permission: ask }).subscribe(subscriber);
        },
        (error: unknown) => {
          // A missing bullmq or ioredis: the fleet's own message says what to install.
          subscriber.next(fleetFailure('setup', errorText(error)));
          subscriber.complete();
        },
      );
      return () => {
        closed = true;
        inner?.unsubscribe();
        // Waits for the cancel of an unfinished run to reach Redis, then lets the process exit.
        void dispatcher?.close();
      };
    });
  return { source, stop: async () => dispatcher?.close() };
}
