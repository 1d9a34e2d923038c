import {
  AUDIT_STORE,
  CLOCK,
  LOGGER,
  METADATA_CONSENSUS,
  STATE_MACHINE,
  OBJECT_STORE,
  RNG,
  token,
} from '@baton/contracts';
import { METRICS, PEER_ROUTES, TRACING } from '@baton/http';
import { definePlugin, resolveOptional, defineOptionlessPlugin } from '@baton/kernel';
import { streamNodeOptions } from './node-options.js';
import { StreamStateMachine } from './state-machine.js';
import { StreamNodeService } from './stream-node-service.js';

export const STREAM_NODE = token<StreamNodeService>('stream-transfer.StreamNode');

/**
 * Extra routes served on the stream node's listener (a consensus plugin's peer traffic, e.g.
 * Raft over HTTP, from @baton/plugin-raft's raftPeerRoutesPlugin): @baton/http's PEER_ROUTES.
 */
export const STREAM_PEER_ROUTES = PEER_ROUTES;

/** The stream metadata state machine, for whichever consensus plugin the host chooses. */
export const streamStateMachinePlugin = defineOptionlessPlugin({
  id: 'stream-state-machine',
  description: 'The replicated stream metadata: nodes, owners and epochs, pending transfers.',
  provides: STATE_MACHINE,
  create: () => new StreamStateMachine(),
});

/** A stream node: sessions, WAL, handoff watcher and the data + admin API. */
export const streamNodePlugin = definePlugin({
  id: 'stream-node',
  description: 'Stream node: appends flushed to the object store, local WAL, handoffs, HTTP API.',
  provides: [STREAM_NODE],
  requires: [CLOCK, RNG, LOGGER, METADATA_CONSENSUS, OBJECT_STORE],
  options: streamNodeOptions,
  register: (ctx) =>
    ctx.provide(STREAM_NODE, {
      useFactory: (resolve) =>
        new StreamNodeService({
          options: ctx.options,
          consensus: resolve(METADATA_CONSENSUS),
          store: resolve(OBJECT_STORE),
          clock: resolve(CLOCK),
          rng: resolve(RNG),
          logger: resolve(LOGGER),
          peerRoutes: resolveOptional(resolve, STREAM_PEER_ROUTES),
          metrics: resolveOptional(resolve, METRICS),
          tracing: resolveOptional(resolve, TRACING),
          audit: resolveOptional(resolve, AUDIT_STORE),
        }),
    }),
});
