import { sendSignal } from './signals.js';

/** The fatal signals a host gets from a terminal, `timeout`, systemd, Kubernetes or `docker stop`. */
const FATAL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type FatalSignal = (typeof FATAL_SIGNALS)[number];

let uninstall: (() => void) | null = null;

/**
 * Makes sure `onHostExit` (a synchronous kill of every run's processes) runs however the host
 * ends while runs are active: on `exit` (`process.exit()`, an uncaught exception, an unhandled
 * rejection), and on SIGINT, SIGTERM and SIGHUP. Installed while runs are active, removed when
 * none is (`removeHostExitHooks`): an idle host is as if agent-rx were not there.
 *
 * A signal stays the host's: the listener installed here runs first (it is put back in front when
 * another one is added) and does nothing when the host has a listener of its own (`on` or `once`,
 * added before or after): the host decides, e.g. `stopAllRuns()` then `process.exit()`, which
 * `exit` covers. Only a host without a listener, which Node would let die of the signal, gets
 * `onHostExit` first and then dies of the signal as it would have (the signal is raised again
 * with no listener left).
 */
export function installHostExitHooks(onHostExit: () => void): void {
  if (uninstall !== null) return;
  const listeners = new Map<FatalSignal, () => void>();
  // A `once` listener removes itself before later listeners run: ours must run before it to see it.
  const keepFirst = (event: string | symbol): void => {
    const signal = event as FatalSignal;
    const ours = listeners.get(signal);
    if (ours === undefined) return;
    queueMicrotask(() => {
      const present = process.rawListeners(signal);
      if (present[0] === ours || !present.includes(ours)) return;
      process.removeListener(signal, ours);
      process.prependListener(signal, ours);
    });
  };
  const remove = (): void => {
    uninstall = null;
    process.removeListener('exit', onHostExit);
    process.removeListener('newListener', keepFirst);
    for (const [signal, listener] of listeners) process.removeListener(signal, listener);
  };
  for (const signal of FATAL_SIGNALS) {
    const listener = (): void => {
      if (process.listenerCount(signal) > 1) return;
      onHostExit();
      remove();
      sendSignal(process.pid, signal);
    };
    listeners.set(signal, listener);
    process.prependListener(signal, listener);
  }
  process.on('exit', onHostExit);
  process.on('newListener', keepFirst);
  uninstall = remove;
}

/** Removes what `installHostExitHooks` installed; a no-op when nothing is. */
export function removeHostExitHooks(): void {
  uninstall?.();
}
