import { contractFetch } from '../../support/api-contract.js';

/** Every answer is held to the answering listener's published OpenAPI document: a mismatch throws. */
const checked = contractFetch();

/**
 * A JSON call to a member's control or public listener at `base`, with a bearer token and an
 * Idempotency-Key when given; the body is parsed when there is one.
 */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; key?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> & { code?: string } }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key) headers['idempotency-key'] = options.key;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await checked(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}
