// Typed clients of the node that served this page, built on the generated OpenAPI types of
// @baton/client (types only: the bundle takes openapi-fetch and nothing of the Node-side client).
// No retry middleware: the page talks to the node that served it alone, and following a
// not-owner hint to another origin would meet CORS and send the token where it was not given.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { AuthorityControlPaths, StreamNodePaths } from '@baton/client';
import { ApiError } from './api.js';

export type StreamNode = Client<StreamNodePaths>;
export type AuthorityControl = Client<AuthorityControlPaths>;

/** How long a poll or an action waits for its answer; a planned transfer asks for its own wait. */
const TIMEOUT_MS = 15_000;

/**
 * Gives every call a deadline, and turns a call that got no answer into the ApiError the views
 * show (a refusal is an answer: api.ts reads it).
 */
function deadline(timeoutMs: number): Middleware {
  return {
    onRequest: ({ request }) => new Request(request, { signal: AbortSignal.timeout(timeoutMs) }),
    onError: ({ error }) => {
      const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
      return new ApiError(timedOut ? `no answer within ${timeoutMs / 1000} s` : 'the node cannot be reached', 0);
    },
  };
}

function nodeClient<Paths extends object>(token: string, timeoutMs: number): Client<Paths> {
  const client = createClient<Paths>({
    // Same origin: the page was served by the node it calls.
    baseUrl: '',
    headers: { accept: 'application/json, application/problem+json', authorization: `Bearer ${token}` },
    // Every poll must see the node as it is now, never a cached answer.
    cache: 'no-store',
  });
  client.use(deadline(timeoutMs));
  return client;
}

/** The stream node that served the page: its admin and data API. */
export function streamNode(token: string, timeoutMs = TIMEOUT_MS): StreamNode {
  return nodeClient<StreamNodePaths>(token, timeoutMs);
}

/** The authority member whose control listener served the page. */
export function authorityControl(token: string, timeoutMs = TIMEOUT_MS): AuthorityControl {
  return nodeClient<AuthorityControlPaths>(token, timeoutMs);
}
