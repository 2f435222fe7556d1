// `agent-rx run --fleet <url>`: the run dispatched to the fleet's workers instead of spawned here;
// `agent-rx chat --fleet <url> --session <id>`: a fleet session attached from here.
// agent-rx/fleet (bullmq, ioredis) is loaded only then.
import { Observable, Subject, type OperatorFunction, type Subscription } from 'rxjs';
import type { RunDispatcher } from '../fleet.js';
import { fleetFailure } from '../fleet/failure.js';
import type { RunSpec } from '../fleet/run-spec.js';
import type { CliMessage, SessionCommand, SessionMessage } from '../messages.js';
import type { SessionSpec } from '../fleet/session-spec.js';
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

/**
 * `agent-rx chat --fleet <url> --session <id>`: the chat's session is the fleet session `id`,
 * attached from here (the conversation goes on from wherever it was left). Ending the chat ends
 * this attachment only: the session sleeps on the fleet, to be continued from any machine.
 */
export function fleetSession(connection: string, sessionId: string, spec: SessionSpec): OperatorFunction<SessionCommand, SessionMessage> {
  return (commands) =>
    new Observable<SessionMessage>((subscriber) => {
      let dispatcher: RunDispatcher | null = null;
      let inner: Subscription | null = null;
      let closed = false;
      // The commands typed while the fleet's modules load are kept, then sent in order.
      const input = new Subject<SessionCommand>();
      const early: Notification[] = [];
      let forward: ((notification: Notification) => void) | null = null;
      const take = (notification: Notification): void => {
        if (forward === null) early.push(notification);
        else forward(notification);
      };
      const taken = commands.subscribe({
        next: (command) => { take({ command }); },
        complete: () => { take('complete'); },
        error: (error: unknown) => { take({ error }); },
      });
      import('../fleet.js').then(
        ({ createRunDispatcher }) => {
          if (closed) return;
          dispatcher = createRunDispatcher({ connection });
          inner = input.pipe(dispatcher.session(sessionId, spec)).subscribe(subscriber);
          forward = (notification) => {
            if (notification === 'complete') input.complete();
            else if ('error' in notification) input.error(notification.error);
            else input.next(notification.command);
          };
          for (const notification of early.splice(0)) forward(notification);
        },
        (error: unknown) => {
          subscriber.next(fleetFailure('setup', errorText(error)));
          subscriber.complete();
        },
      );
      return () => {
        closed = true;
        taken.unsubscribe();
        inner?.unsubscribe();
        void dispatcher?.close();
      };
    });
}

/** What the caller's command stream did. */
type Notification = { readonly command: SessionCommand } | { readonly error: unknown } | 'complete';
