import type { Clock } from '@baton/contracts';
import { childSpan, traceHeaders } from '@baton/http';

export interface PeerFetchOptions {
  clock: Clock;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bearer token presented to the peer's public server (only accepted there under insecure: true). */
  token?: string;
  /** This member's peer credential headers (PeerAuthenticator.outboundHeaders). */
  headers?: Record<string, string>;
}

/**
 * GET a peer's JSON over HTTP with a deadline on the injected clock (so simulations control
 * it) and the caller's abort signal. Rejects on any failure: the callers decide that an error
 * means "no reading", never a guess.
 */
export async function fetchPeerJson(url: string, options: PeerFetchOptions): Promise<unknown> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal!.reason);
  options.signal?.throwIfAborted();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = options.clock.setTimer(options.timeoutMs, () =>
    controller.abort(new Error(`no answer from ${url} within ${options.timeoutMs} ms`)),
  );
  try {
    // A feed pull or barrier probe made for a traced request carries its traceparent; the
    // background pulls of the replicator run outside any and make no span.
    const response = await childSpan(`GET ${new URL(url).pathname.replace(/\/feeds\/[^/]+\//, '/feeds/{origin}/')}`, { 'url.full': url }, () =>
      fetch(url, {
        signal: controller.signal,
        headers: { ...options.headers, ...traceHeaders(), ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
      }),
    );
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    return await response.json();
  } finally {
    timer.cancel();
    options.signal?.removeEventListener('abort', onAbort);
  }
}
