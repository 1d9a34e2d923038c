/** A problem+json answer the client could not resolve by following hints or waiting. */
export class StreamApiError extends Error {
  readonly code: string;

  constructor(
    readonly status: number,
    readonly problem: { type?: unknown; detail?: unknown; [member: string]: unknown },
    readonly url: string,
  ) {
    super(`${url} answered ${status}: ${String(problem.detail ?? problem.type ?? 'no detail')}`);
    this.name = 'StreamApiError';
    this.code = `stream_api_${status}`;
  }
}
