import createClient, { type Client } from 'openapi-fetch';
import { retryMiddleware, type AuthorityControlPaths, type AuthorityPublicPaths, type RetryOptions, type StreamNodePaths } from '@baton/client';
import { FailedError, UnreachableError } from './cli-errors.js';
import { connectionFailure } from './connection-failure.js';
import type { Connection } from './connection.js';
import type { UpControlPaths } from './local-cluster/up-control-paths.js';
import { refusal } from './refusal.js';

export type StreamApi = Client<StreamNodePaths>;
export type AuthorityControlApi = Client<AuthorityControlPaths>;
export type AuthorityPublicApi = Client<AuthorityPublicPaths>;
export type UpControlApi = Client<UpControlPaths>;

export interface ApiOptions {
  /** Gives up on one exchange after this long and reports the address unreachable (default 10 s). */
  timeoutMs?: number;
  /** Ends every exchange at once when it aborts (a follow stopped by Ctrl-C). */
  stop?: AbortSignal;
  /**
   * Follows not-owner hints and waits out 503s with Retry-After. Absent, every call is one
   * request: what an operator's command sends is what reaches the node, once.
   */
  retry?: RetryOptions;
}

/** The typed client of a stream node's data and admin API. */
export function streamApi(address: Connection, options: ApiOptions = {}): StreamApi {
  return apiClient<StreamNodePaths>(address, options);
}

/** The typed client of an authority member's control listener. */
export function authorityControlApi(address: Connection, options: ApiOptions = {}): AuthorityControlApi {
  return apiClient<AuthorityControlPaths>(address, options);
}

/** The typed client of an authority member's public server (where writes are taken). */
export function authorityPublicApi(address: Connection, options: ApiOptions = {}): AuthorityPublicApi {
  return apiClient<AuthorityPublicPaths>(address, options);
}

/** What every call of an openapi-fetch client resolves to. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's body, or the refusal (HttpRefusal, the server's words in CLI terms) it is. */
export async function cliCall<T>(call: Promise<Answer<T>>): Promise<T> {
  return (await cliAnswer(call)).data;
}

/** As cliCall, with the status the answer came with (201 created, 202 accepted...). */
export async function cliAnswer<T>(call: Promise<Answer<T>>): Promise<{ data: T; status: number }> {
  const { data, error, response } = await call;
  if (!response.ok) throw refusal(answeredAt.get(response) ?? response.url, response.status, error);
  return { data: data as T, status: response.status };
}

/** The typed client of the `baton up` that owns the local node processes (its control listener). */
export function upControlApi(address: Connection, options: ApiOptions = {}): UpControlApi {
  return apiClient<UpControlPaths>(address, options);
}

/**
 * Every client of the CLI sends an Idempotency-Key only where the command chose one (--key, or
 * a key it names in its output): the stream API keeps unkeyed writes out of the consensus'
 * bounded window of keys, and an authority member mints the key of a change sent without one.
 * So the key-minting middleware of @baton/client's own factories is left out, and its retry
 * middleware is added only where a command asks for it.
 */
function apiClient<Paths extends object>(address: Connection, options: ApiOptions): Client<Paths> {
  const client = createClient<Paths>({
    // Checked here, so an address that is not http(s) is refused before any request.
    baseUrl: checkedBase(address.url),
    fetch: reaching(address.fetch ?? fetch, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.stop),
    headers: {
      accept: 'application/json, application/problem+json',
      ...(address.token ? { authorization: `Bearer ${address.token}` } : {}),
    },
  });
  if (options.retry) client.use(retryMiddleware(options.retry));
  return client;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** `base` (an http(s) URL, perhaps with a path) without trailing slashes; a bad base is a usage-like refusal. */
function checkedBase(base: string): string {
  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    throw new FailedError('invalid_address', `${JSON.stringify(base)} is not a URL: give it as http://host:port`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new FailedError('invalid_address', `${base} is not an http(s) address: give it as http://host:port`);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** The URL each answer came from: a hint may have sent the call elsewhere, and a CA-trusting fetch's answers carry none. */
const answeredAt = new WeakMap<Response, string>();

/**
 * Sends one exchange with its own time limit; one that cannot be made (refused, timed out, an
 * untrusted certificate) is an UnreachableError naming the address it went to, also when a
 * hint had sent it there. The request goes as method, headers and a string body, which both
 * the global fetch and the CA-trusting one take.
 */
function reaching(send: typeof fetch, timeoutMs: number, stop?: AbortSignal): (request: Request) => Promise<Response> {
  return async (request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const body = request.body === null ? undefined : await request.text();
    try {
      const response = await send(request.url, {
        method: request.method,
        headers: request.headers,
        ...(body === undefined ? {} : { body }),
        signal: stop ? AbortSignal.any([stop, timeout]) : timeout,
      });
      answeredAt.set(response, request.url);
      return response;
    } catch (error) {
      throw new UnreachableError(new URL(request.url).origin, connectionFailure(error, timeoutMs), { cause: error });
    }
  };
}
