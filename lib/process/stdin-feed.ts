import type { Writable } from 'node:stream';
import type { Observable, Subscription } from 'rxjs';

/**
 * Writes an Observable's chunks to a child's stdin in order, respecting back-pressure: while the
 * pipe asks to wait (`write` returned false), chunks queue here and go out on `drain`. stdin is
 * ended when the source completes or errors, once the queue is written. Unsubscribing the
 * returned subscription stops the source and drops what is still queued; stdin stays open (the
 * stop sequence may still write its interrupt bytes to it).
 */
export function feedStdin(pipe: Writable, source: Observable<string | Uint8Array>, onError: (message: string) => void): Subscription {
  const queue: (string | Uint8Array)[] = [];
  let waiting = false;
  let ending = false;
  const usable = (): boolean => pipe.writable && !pipe.writableEnded && !pipe.destroyed;
  const flush = (): void => {
    waiting = false;
    while (queue.length > 0 && usable()) {
      const chunk = queue.shift() as string | Uint8Array;
      if (!pipe.write(chunk)) {
        waiting = true;
        pipe.once('drain', flush);
        return;
      }
    }
    if (ending && usable()) pipe.end();
  };
  const subscription = source.subscribe({
    next: (chunk) => {
      queue.push(chunk);
      if (!waiting) flush();
    },
    error: (error: unknown) => {
      onError(`stdin source failed: ${error instanceof Error ? error.message : String(error)}`);
      ending = true;
      if (!waiting) flush();
    },
    complete: () => {
      ending = true;
      if (!waiting) flush();
    },
  });
  subscription.add(() => {
    queue.length = 0;
    pipe.off('drain', flush);
  });
  return subscription;
}
