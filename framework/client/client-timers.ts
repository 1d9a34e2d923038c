/**
 * The real delay a client waits before a retry: the client runs in the caller's process, outside
 * any host's injected Clock. Tests pass their own `sleep` to the clients instead.
 */
export function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms)); // clock-ok: a client outside any host, replaceable by the sleep option
}

/** A real one-shot timer for a client (see realSleep); answers its cancel. */
export function realTimer(ms: number, fn: () => void): () => void {
  const timer = setTimeout(fn, ms); // clock-ok: a client outside any host
  return () => clearTimeout(timer);
}
