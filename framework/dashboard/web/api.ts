// The page's one way to call the node that served it: same origin, the token as a bearer
// header, every error answer turned into a message in the server's own words.

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
