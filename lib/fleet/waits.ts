// Waits that end on their own: what a closing worker must not wait for unbounded.

/** Resolves when `promise` settles (resolved or rejected) or after `ms`, whichever is first; never rejects. */
export async function within(ms: number, promise: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise.then(ignore, ignore), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `signal` is aborted. */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => {
      resolve();
    }, { once: true });
  });
}

function ignore(): void {
  // Settled is all that counts.
}
