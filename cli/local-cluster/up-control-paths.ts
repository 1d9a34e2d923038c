import type { NodeState } from './node-supervisor.js';

/**
 * The routes of `baton up`'s own control listener (control-server.ts), in the shape
 * openapi-typescript gives the nodes' documents, so `baton node` calls it through the same
 * typed client. It is the CLI talking to itself on loopback: no OpenAPI document is published
 * for it, so these types are kept by hand beside the server they describe.
 */
export interface UpControlPaths {
  '/nodes': {
    get: Operation<undefined, { nodes: NodeState[] }>;
  };
  '/nodes/{node}/stop': {
    post: Operation<{ node: string }, { node: NodeState }>;
  };
  '/nodes/{node}/start': {
    post: Operation<{ node: string }, { node: NodeState }>;
  };
}

/** An operation answering `Answer` (200), with the path parameters `Path` (undefined: none). */
interface Operation<Path, Answer> {
  parameters: { query?: never; header?: never; cookie?: never } & (Path extends undefined ? { path?: never } : { path: Path });
  requestBody?: never;
  responses: {
    200: { headers: { [name: string]: unknown }; content: { 'application/json': Answer } };
  };
}
