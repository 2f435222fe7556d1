import { sendSignal } from './signals.js';

/** The fatal signals a host gets from a terminal, `timeout`, systemd, Kubernetes or `docker stop`. */
const FATAL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type FatalSignal = (typeof FATAL_SIGNALS)[number];

let installed = false;

/**
 * Makes sure `onHostExit` (a synchronous kill of every run's processes) runs however the host
 * ends while runs are active: on `exit` (`process.exit()`, an uncaught exception, an unhandled
 * rejection, the end of the event loop), and on SIGINT, SIGTERM and SIGHUP.
 *
 * A signal stays the host's: the listener installed here runs first (it is put back in front when
 * another one is added) and does nothing when the host has a listener of its own (`on` or `once`,
 * added before or after): the host decides, e.g. `stopAllRuns()` then `process.exit()`, which
 * `exit` covers. Only a host without a listener, which Node would let die of the signal, gets
 * `onHostExit` first and then dies of the signal as it would have (the signal is raised again
 * with no listener left). Nothing else a host does or does not do is changed.
 */
export function installHostExitHooks(onHostExit: () => void): void {
  if (installed) return;
  installed = true;
  process.on('exit', onHostExit);
  const listeners = new Map<FatalSignal, () => void>();
  for (const signal of FATAL_SIGNALS) {
    const listener = (): void => {
      if (process.listenerCount(signal) > 1) return;
      onHostExit();
      for (const [name, ours] of listeners) process.removeListener(name, ours);
      sendSignal(process.pid, signal);
    };
    listeners.set(signal, listener);
    process.prependListener(signal, listener);
  }
  // A `once` listener removes itself before later listeners run: ours must run before it to see it.
  process.on('newListener', (event: string | symbol) => {
    const signal = event as FatalSignal;
    const ours = listeners.get(signal);
    if (ours === undefined) return;
    queueMicrotask(() => {
      const present = process.rawListeners(signal);
      if (present[0] === ours || !present.includes(ours)) return;
      process.removeListener(signal, ours);
      process.prependListener(signal, ours);
    });
  });
}
