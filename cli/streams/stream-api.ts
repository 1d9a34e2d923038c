import { authHint, connectionFailure, problemCode } from '../admin-client.js';
import { HttpRefusal, UnreachableError } from '../cli-errors.js';
import { inCliTerms } from '../cli-terms.js';
import type { Connection, ConnectionTarget } from '../connection.js';
import { StreamApiError, StreamClient } from '@baton/client';

/** The stream commands talk to any node's data and admin API (a node of the default config). */
export const STREAM_API: ConnectionTarget = {
  listener: 'stream node API',
  defaultUrl: 'http://127.0.0.1:7700',
};

/** How long one HTTP exchange may take before the node counts as unreachable. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The stream-transfer client, with the CLI's error vocabulary: a connection that cannot be made
 * (to the node given, or to the owner a 409 hint sent the client to) is an UnreachableError
 * naming that address; the client itself follows hints and sits through handoffs.
 */
export function streamClient(connection: Connection, timeoutMs = REQUEST_TIMEOUT_MS, stop?: AbortSignal): StreamClient {
  const send = connection.fetch ?? fetch;
  const reaching: typeof fetch = async (input, init) => {
    try {
      const timeout = AbortSignal.timeout(timeoutMs);
      return await send(input, { ...init, signal: stop ? AbortSignal.any([stop, timeout]) : timeout });
    } catch (error) {
      const url = input instanceof Request ? input.url : String(input);
      throw new UnreachableError(new URL(url).origin, connectionFailure(error, timeoutMs), {
        cause: error,
      });
    }
  };
  return new StreamClient({
    nodes: [connection.url],
    ...(connection.token ? { token: connection.token } : {}),
    fetch: reaching,
  });
}

/** Runs a client call, turning the API's refusals into HttpRefusal (exit 1, the server's words). */
export async function streamCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StreamApiError) {
      const type = typeof error.problem.type === 'string' ? error.problem.type : undefined;
      throw new HttpRefusal(
        problemCode(type, error.status),
        `${new URL(error.url).origin} refused (${error.status}): ${inCliTerms(String(error.problem.detail ?? error.problem.type ?? 'no detail'))}${authHint(error.status)}`,
        error.status,
        error.problem,
        { cause: error },
      );
    }
    throw error;
  }
}
