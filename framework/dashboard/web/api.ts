// How the page reads the node's answers: every refusal, and every call that got no answer,
// becomes an ApiError in the server's own words, which the views show as they are.
import type { FetchResponse } from 'openapi-fetch';

/** An answer the server refused (problem+json), or a request that got no answer. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly problem: Record<string, unknown> = {},
  ) {
    super(message);
  }

  get unauthorized(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The answer of a call made with one of the node clients (node-clients.ts), or its refusal thrown. */
export async function answer<Answer extends FetchResponse<any, any, any>>(call: Promise<Answer>): Promise<NonNullable<Answer['data']>> {
  const { data, error, response } = await call;
  if (!response.ok) {
    const problem = error && typeof error === 'object' ? (error as Record<string, unknown>) : {};
    const detail = typeof problem.detail === 'string' ? problem.detail : `HTTP ${response.status}`;
    throw new ApiError(detail, response.status, problem);
  }
  // An answer without a body (204) has no data: the caller of such a route uses none.
  return data as NonNullable<Answer['data']>;
}

/** The hand-written caller, until every view calls through node-clients.ts. */
const TIMEOUT_MS = 15_000;

export async function api<T>(token: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, timeoutMs = TIMEOUT_MS): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json', authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
      cache: 'no-store',
    });
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    throw new ApiError(timedOut ? `no answer within ${timeoutMs / 1000} s` : 'the node cannot be reached', 0);
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    const problem = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    const detail = typeof problem.detail === 'string' ? problem.detail : `HTTP ${response.status}`;
    throw new ApiError(detail, response.status, problem);
  }
  return parsed as T;
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.status === 0 ? error.message : `${error.status}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
