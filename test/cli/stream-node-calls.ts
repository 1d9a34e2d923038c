import { streamNodeClient } from '@baton/client/internal/clients.js';

/** A refused call: its status and problem, so a test can accept an outcome (409: it exists). */
export class RefusedCall extends Error {
  constructor(
    readonly status: number,
    readonly problem: unknown,
  ) {
    super(`answered ${status}: ${JSON.stringify(problem)}`);
  }
}

async function answered<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new RefusedCall(response.status, error);
  return data as T;
}

/**
 * The few stream calls the CLI tests make beside the commands they test, through the generated
 * client (which follows owner hints and waits out handoffs), each throwing RefusedCall when refused.
 */
export function streamNodeCalls(url: string, token: string) {
  const client = streamNodeClient({ baseUrl: url, token });
  return {
    nodes: () => answered(client.GET('/v1/admin/nodes')),
    createStream: (stream: string, node?: string) => answered(client.POST('/v1/admin/streams', { body: { stream, ...(node ? { node } : {}) } })),
    append: (stream: string, bodies: string[]) =>
      answered(client.POST('/v1/streams/{stream}/records', { params: { path: { stream } }, body: { records: bodies.map((body) => ({ body })) } })),
    read: (stream: string, from = 0, limit = 100, wait = 0) =>
      answered(client.GET('/v1/streams/{stream}/records', { params: { path: { stream }, query: { from, limit, ...(wait > 0 ? { wait } : {}) } } })),
  };
}
