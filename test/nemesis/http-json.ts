/**
 * One HTTP call of a nemesis client, classified the way a history needs it: an answer (any
 * status), `refused` when no connection could be made (the request certainly did nothing), or
 * `lost` when it was sent, or may have been, and no answer came (timeout, reset): its effect is
 * unknown.
 */
export type CallResult =
  | { kind: 'answer'; status: number; body: any; headers: Headers }
  | { kind: 'refused'; reason: string }
  | { kind: 'lost'; reason: string };

export async function callJson(
  url: string,
  options: {
    method?: string;
    body?: unknown;
    token?: string;
    timeoutMs: number;
    headers?: Record<string, string>;
  },
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    return classifyFailure(error);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    // The status came, the body did not: the request was handled, its answer is lost.
    return { kind: 'lost', reason: `answer cut: ${(error as Error).message}` };
  }
  let body: unknown = undefined;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = { detail: text };
  }
  return { kind: 'answer', status: response.status, body, headers: response.headers };
}

function classifyFailure(error: unknown): CallResult {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  // Nothing was sent when the connection was refused outright.
  if (code === 'ECONNREFUSED') return { kind: 'refused', reason: 'connection refused' };
  const name = (error as Error).name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return { kind: 'lost', reason: 'no answer in time' };
  return { kind: 'lost', reason: code ?? cause?.message ?? (error as Error).message };
}
