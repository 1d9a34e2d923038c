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

export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.status === 0 ? error.message : `${error.status}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
