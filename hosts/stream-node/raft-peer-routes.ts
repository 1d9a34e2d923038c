import { z } from 'zod';
import { serveRouter } from '../../framework/http/routes.js';
import { definePlugin } from '../../framework/kernel/plugin.js';
import { STREAM_PEER_ROUTES } from '../../framework/stream-transfer/plugins.js';
import { RAFT_PEER_OPERATIONS, RAFT_PEER_ROUTER } from '../../plugins/raft/transport-http.js';

/** Serves Raft peer traffic on the stream node's listener, the address its peers are given. */
export const streamRaftPeerRoutesPlugin = definePlugin({
  id: 'stream-raft-peer-routes',
  description: 'Serves Raft peer traffic on the stream node listener.',
  provides: [STREAM_PEER_ROUTES],
  requires: [RAFT_PEER_ROUTER],
  options: z.object({}).strict(),
  register: (ctx) => ctx.provide(STREAM_PEER_ROUTES, { useFactory: (resolve) => [{ routes: serveRouter(resolve(RAFT_PEER_ROUTER)), operations: RAFT_PEER_OPERATIONS }] }),
});
