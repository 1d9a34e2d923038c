import type { Clock, Timer } from '@baton/contracts';

/** The real clock: wall time and Node timers. The one place outside tests that touches them. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  setTimer(ms: number, fn: () => void): Timer {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(handle);
        reject(signal!.reason);
      };
      const handle = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
