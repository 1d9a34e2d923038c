import { FailedError, HttpRefusal, UnreachableError } from './cli-errors.js';
import { inCliTerms } from './cli-terms.js';

export interface AdminRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  token?: string;
  body?: unknown;
  idempotencyKey?: string;
  /** Gives up after this long and reports the server unreachable (default 10 s). */
  timeoutMs?: number;
}

export interface AdminResponse<T = unknown> {
  status: number;
  body: T;
}

/**
 * The admin commands' one way to talk to a node. A connection that cannot be made becomes an
 * UnreachableError naming the address (exit code 3); an answer with a problem+json body
 * becomes a FailedError carrying the server's own explanation (exit code 1), so a refused
 * transfer says why in the server's words. `send` is the global fetch unless the caller must
 * trust a CA this process was not started with (`baton up --tls`).
 */
export async function adminRequest<T = unknown>(
  base: string,
  request: AdminRequest,
  send: typeof fetch = fetch,
): Promise<AdminResponse<T>> {
  const url = joinUrl(base, request.path);
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  if (request.token) headers.authorization = `Bearer ${request.token}`;
  if (request.idempotencyKey) headers['idempotency-key'] = request.idempotencyKey;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  const timeoutMs = request.timeoutMs ?? 10_000;
  let response: Response;
  try {
    response = await send(url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new UnreachableError(new URL(url).origin, connectionFailure(error, timeoutMs), {
      cause: error,
    });
  }
  const text = await response.text();
  const body = parseBody(text, response.headers.get('content-type'));
  if (!response.ok) throw refusal(request, url, response.status, body);
  return { status: response.status, body: body as T };
}

/** `base` (an http(s) URL, perhaps with a path) joined with an API path; a bad base is a usage-like refusal. */
export function joinUrl(base: string, path: string): string {
  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    throw new FailedError(
      'invalid_address',
      `${JSON.stringify(base)} is not a URL: give it as http://host:port`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new FailedError(
      'invalid_address',
      `${base} is not an http(s) address: give it as http://host:port`,
    );
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}${path}`;
}

/** Why fetch failed, in words: the system error code when there is one (ECONNREFUSED...). */
export function connectionFailure(error: unknown, timeoutMs: number): string {
  if (isTimeout(error)) return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED')
    return 'connection refused (is the node running, on this port?)';
  if (cause?.code === 'ENOTFOUND') return 'no such host';
  if (cause?.code && UNTRUSTED_CERTIFICATE.has(cause.code))
    return `the node's TLS certificate is not trusted (${cause.code}): trust its CA with NODE_EXTRA_CA_CERTS=<ca.pem>`;
  if (cause?.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `the node's TLS certificate does not name this address: ${cause.message ?? ''}`.trim();
  if (cause?.code === 'UND_ERR_SOCKET' || cause?.code === 'ECONNRESET')
    return `the connection was closed before an answer (${cause.message ?? cause.code}); if the node serves HTTPS, give an https:// address`;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  // fetch refuses some ports outright (1, 6000, ...: the WHATWG "bad ports").
  if (cause?.message === 'bad port')
    return 'this port is one HTTP clients refuse to connect to; give the port the node listens on';
  if (cause?.message) return cause.message;
  return (error as Error).message ?? String(error);
}

/** The codes of a certificate chain the client does not trust (Node's X509 verify errors). */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** True when fetch gave up because the wait ran out (the request may have reached the server). */
export function isTimeout(error: unknown): boolean {
  return (
    error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')
  );
}

function parseBody(text: string, contentType: string | null): unknown {
  if (text === '') return undefined;
  if (contentType && /json/.test(contentType)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** An error answer as an HttpRefusal: the problem's detail (or title) and its type as the code. */
function refusal(request: AdminRequest, url: string, status: number, body: unknown): HttpRefusal {
  const problem = (body && typeof body === 'object' ? body : {}) as Record<string, unknown> & {
    type?: string;
    title?: string;
    detail?: string;
  };
  const why =
    problem.detail ?? problem.title ?? (typeof body === 'string' && body ? body : `HTTP ${status}`);
  return new HttpRefusal(
    problemCode(problem.type, status),
    `${new URL(url).origin} refused (${status}): ${inCliTerms(String(why))}${authHint(status)}${listenerHint(request.path, status, problem)}`,
    status,
    problem,
  );
}

/** The last segment of a problem type (`urn:baton:problem:not-owner` -> `not-owner`), else `http_<status>`. */
export function problemCode(type: string | undefined, status: number): string {
  return type && type !== 'about:blank' ? type.replace(/^.*[/#:]/, '') : `http_${status}`;
}

/**
 * A 404 of a control route that names nothing it looked for (no authority, no code) is the
 * route itself missing: the address is not an authority member's control listener, most often
 * its public one, which the roster and the cluster picture list.
 */
function listenerHint(path: string, status: number, problem: Record<string, unknown>): string {
  if (status !== 404 || !path.startsWith('/availability/v1/') || problem.authority !== undefined || problem.code !== undefined) return '';
  return " (this address serves no such route: give --url an authority member's control listener, not its public address; " +
    '"baton up --variant authority" prints both, labelled control and public)';
}

/** What to do about a 401 or 403, appended to the server's words. */
export function authHint(status: number): string {
  if (status === 401) return ' (give a token with --token or BATON_TOKEN)';
  if (status === 403) return ' (this token lacks the scope)';
  return '';
}
