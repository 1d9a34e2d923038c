import type { RetryOptions } from '@baton/client';
import { streamApi, type ApiOptions, type StreamApi } from '../api-client.js';
import type { Connection, ConnectionTarget } from '../connection.js';

/** The stream commands talk to any node's data and admin API (a node of the default config). */
export const STREAM_API: ConnectionTarget = {
  listener: 'stream node API',
  defaultUrl: 'http://127.0.0.1:7700',
};

/** How long one HTTP exchange may take before the node counts as unreachable. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * What an append sits through before it reports the answer: the not-owner hints to the owner
 * (or owner-to-be) and the 503s of a handoff still settling, waited out as Retry-After says up
 * to 30 s each: 5 hints and 30 waits, as many as the appends of the stream commands always took.
 */
export const APPEND_RETRIES: RetryOptions = { maxAttempts: 1 + 5 + 30, maxRetryAfterMs: 30_000 };

/**
 * The typed client of the stream node at `connection`, giving each exchange 30 s: a connection
 * that cannot be made (to the node given, or to the owner a hint sent an append to) is an
 * UnreachableError naming that address; calls make one request each unless `options.retry`
 * says otherwise. (`baton plan` and `baton streams undrain` give the node api-client's 10 s.)
 */
export function streamNode(connection: Connection, options: ApiOptions = {}): StreamApi {
  return streamApi(connection, { timeoutMs: REQUEST_TIMEOUT_MS, ...options });
}
