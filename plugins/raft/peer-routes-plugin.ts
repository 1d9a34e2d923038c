import { z } from 'zod';
import { PEER_ROUTES, serveRouter } from '@baton/http';
import { definePlugin } from '@baton/kernel';
import { RAFT_PEER_OPERATIONS } from './peer-routes-document.js';
import { RAFT_PEER_ROUTER } from './transport-http.js';

/**
 * Serves the Raft HTTP transport's peer routes on the member's peer-facing listener (a stream
 * node's listener, an authority member's public server): the address its peers are given.
 * Either variant takes them through @baton/http's PEER_ROUTES, so a host adds this plugin
 * beside httpPeerTransportPlugin and needs no glue of its own.
 */
export const raftPeerRoutesPlugin = definePlugin({
  id: 'raft-peer-routes',
  description: "Serves Raft peer traffic on the member's peer-facing listener.",
  provides: [PEER_ROUTES],
  requires: [RAFT_PEER_ROUTER],
  options: z.object({}).strict(),
  register: (ctx) =>
    ctx.provide(PEER_ROUTES, { useFactory: (resolve) => [{ routes: serveRouter(resolve(RAFT_PEER_ROUTER)), operations: RAFT_PEER_OPERATIONS }] }),
});
