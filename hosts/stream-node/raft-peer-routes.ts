import { z } from 'zod';
import { serveRouter } from '@baton/http';
import { definePlugin } from '@baton/kernel';
import { STREAM_PEER_ROUTES } from '@baton/stream-transfer';
import { RAFT_PEER_OPERATIONS, RAFT_PEER_ROUTER } from '@baton/plugin-raft';

/** Serves Raft peer traffic on the stream node's listener, the address its peers are given. */
export const streamRaftPeerRoutesPlugin = definePlugin({
  id: 'stream-raft-peer-routes',
  description: 'Serves Raft peer traffic on the stream node listener.',
  provides: [STREAM_PEER_ROUTES],
  requires: [RAFT_PEER_ROUTER],
  options: z.object({}).strict(),
  register: (ctx) => ctx.provide(STREAM_PEER_ROUTES, { useFactory: (resolve) => [{ routes: serveRouter(resolve(RAFT_PEER_ROUTER)), operations: RAFT_PEER_OPERATIONS }] }),
});
