import { z } from 'zod';
import { PUBLIC_PEER_ROUTES } from '@baton/authority-transfer';
import { definePlugin } from '@baton/kernel';
import { serveRouter } from '@baton/http';
import { RAFT_PEER_OPERATIONS, RAFT_PEER_ROUTER } from '@baton/plugin-raft';

/**
 * Mounts the Raft HTTP transport's router on the node's public server, where the roster's
 * addresses point: the variant knows no plugin, so the host makes the connection.
 */
export const raftPeerRoutesPlugin = definePlugin({
  id: 'raft-peer-routes',
  description: 'Serves Raft peer traffic on the authority node public server.',
  provides: [PUBLIC_PEER_ROUTES],
  requires: [RAFT_PEER_ROUTER],
  options: z.object({}).strict(),
  register: (ctx) =>
    ctx.provide(PUBLIC_PEER_ROUTES, { useFactory: (resolve) => [{ routes: serveRouter(resolve(RAFT_PEER_ROUTER)), operations: RAFT_PEER_OPERATIONS }] }),
});
