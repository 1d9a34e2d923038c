import createClient, { type Client } from 'openapi-fetch';
import type { paths as AuthorityControlPaths } from './generated/authority-control.js';
import type { paths as AuthorityPublicPaths } from './generated/authority-public.js';
import type { paths as StreamNodePaths } from './generated/stream-node.js';
import { idempotencyKeyMiddleware, retryMiddleware, type RetryOptions } from './retry-middleware.js';

export type { AuthorityControlPaths, AuthorityPublicPaths, StreamNodePaths };

export interface BatonClientOptions extends RetryOptions {
  /** The listener's base URL: `http://127.0.0.1:7400`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` on every call. */
  token?: string;
  /** Replaces the global fetch (a test's contract check, a TLS-configured dispatcher). */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * false: a change carries an Idempotency-Key only when the caller gives one. Such a client
   * should not resend changes (maxAttempts: 1), since an unkeyed resend may be applied twice.
   */
  mintKeys?: boolean;
}

function batonClient<Paths extends object>(options: BatonClientOptions): Client<Paths> {
  const client = createClient<Paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
  });
  // The key first: the retry middleware keeps the keyed request to send it again as it is.
  if (options.mintKeys !== false) client.use(idempotencyKeyMiddleware(options.mintKey));
  client.use(retryMiddleware(options));
  return client;
}

/** A stream node's data and admin API, typed from its OpenAPI document. */
export function streamNodeClient(options: BatonClientOptions): Client<StreamNodePaths> {
  return batonClient<StreamNodePaths>(options);
}

/** An authority member's control listener: planned transfers, the raw command, ownership, audit. */
export function authorityControlClient(options: BatonClientOptions): Client<AuthorityControlPaths> {
  return batonClient<AuthorityControlPaths>(options);
}

/** An authority member's public server: fenced writes (and the members' feeds). */
export function authorityPublicClient(options: BatonClientOptions): Client<AuthorityPublicPaths> {
  return batonClient<AuthorityPublicPaths>(options);
}
