import type { Clock } from '@baton/contracts';

export type WaitEnd<T> =
  { kind: 'done'; value: T } | { kind: 'timeout' } | { kind: 'aborted' } | { kind: 'stopped' };

/**
 * Waits for `promise` until the deadline (clock time), the caller's signal or the member's stop
 * signal, whichever comes first, and says which. Never rejects: a rejection of `promise` is
 * re-thrown by the caller's own handling, so it must not reject here (pass settled promises).
 */
export async function waitUntil<T>(
  promise: Promise<T>,
  options: { clock: Clock; deadline: number; signal?: AbortSignal; stop: AbortSignal },
): Promise<WaitEnd<T>> {
  const { clock, deadline, signal, stop } = options;
  if (stop.aborted) return { kind: 'stopped' };
  if (signal?.aborted) return { kind: 'aborted' };
  const release = new AbortController();
  const ends: Array<Promise<WaitEnd<T>>> = [
    promise.then((value) => ({ kind: 'done', value }) as const),
    clock.sleep(Math.max(0, deadline - clock.now()), release.signal).then(
      () => ({ kind: 'timeout' }) as const,
      () => ({ kind: 'timeout' }) as const,
    ),
    abortOf(stop, release.signal).then(() => ({ kind: 'stopped' }) as const),
  ];
  if (signal) ends.push(abortOf(signal, release.signal).then(() => ({ kind: 'aborted' }) as const));
  try {
    return await Promise.race(ends);
  } finally {
    release.abort();
  }
}

/** Resolves when `signal` aborts; never, once `release` aborts (so no listener is left behind). */
function abortOf(signal: AbortSignal, release: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      release.removeEventListener('abort', onRelease);
      resolve();
    };
    const onRelease = () => signal.removeEventListener('abort', onAbort);
    signal.addEventListener('abort', onAbort, { once: true });
    release.addEventListener('abort', onRelease, { once: true });
  });
}

/**
 * Waits for `promise` at most `ms`, never rejecting. For clean-up calls to etcd (cancelling a
 * watch, revoking a lease) that must not hold a stop up while etcd is unreachable.
 */
export async function atMost(promise: Promise<unknown>, ms: number, clock: Clock): Promise<void> {
  const release = new AbortController();
  await Promise.race([
    promise.catch(() => undefined),
    clock.sleep(ms, release.signal).catch(() => undefined),
  ]);
  release.abort();
}
