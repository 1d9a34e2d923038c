import {
  AUDIT_STORE,
  CLOCK,
  IDENTITY_SUPPLIER,
  LOGGER,
  METADATA_CONSENSUS,
  STATE_MACHINE,
  RNG,
  token,
} from '@baton/contracts';
import { METRICS, PEER_ROUTES, TRACING, PEER_AUTH } from '@baton/http';
import { definePlugin, type Resolve, resolveOptional, defineOptionlessPlugin } from '@baton/kernel';
import { AuthorityNode, type AuthorityNodeDeps } from './authority-node.js';
import { FRONTIER_PROBE } from './frontier-probe.js';
import { authorityNodeOptions, type AuthorityNodeOptions } from './node-options.js';
import { OwnershipStateMachine } from './ownership-state-machine.js';

export const AUTHORITY_NODE = token<AuthorityNode>('authority-transfer.AuthorityNode');

/**
 * Peer routing served on the node's public server (the consensus transport's router, e.g.
 * @baton/plugin-raft's raftPeerRoutesPlugin): every member address names the public server, so
 * peer traffic of any kind arrives there. @baton/http's PEER_ROUTES.
 */
export const PUBLIC_PEER_ROUTES = PEER_ROUTES;

/** The ownership state machine, for whichever consensus plugin the host chooses to replicate it. */
export const ownershipStateMachinePlugin = defineOptionlessPlugin({
  id: 'ownership-state-machine',
  description: 'The replicated ownership state of the authority-transfer variant.',
  provides: STATE_MACHINE,
  create: () => new OwnershipStateMachine(),
});

/**
 * An authority node in mode ha: planned transfers over the shared ownership consensus, with the
 * audit projected into the AuditStore. The probe is HTTP unless a host supplies FRONTIER_PROBE
 * as a value (tests and simulations do).
 */
export const authorityNodeHaPlugin = definePlugin({
  id: 'authority-node-ha',
  description: 'Authority node, mode ha: ownership consensus, planned transfers, fencing, audit.',
  provides: [AUTHORITY_NODE],
  requires: [CLOCK, RNG, LOGGER, IDENTITY_SUPPLIER, METADATA_CONSENSUS, AUDIT_STORE],
  options: authorityNodeOptions,
  register: (ctx) =>
    ctx.provide(AUTHORITY_NODE, {
      useFactory: (resolve) =>
        newAuthorityNode('ha', ctx.options, resolve, () => ({
          consensus: resolve(METADATA_CONSENSUS),
          audit: resolve(AUDIT_STORE),
          probe: resolveOptional(resolve, FRONTIER_PROBE),
          peerRoutes: resolveOptional(resolve, PUBLIC_PEER_ROUTES),
        })),
    }),
});

/** An authority node in mode dc: no ownership consensus; transfer requests answer 503. */
export const authorityNodeDcPlugin = definePlugin({
  id: 'authority-node-dc',
  description: 'Authority node, mode dc: change feed and member tracker; no transfers.',
  provides: [AUTHORITY_NODE],
  requires: [CLOCK, RNG, LOGGER, IDENTITY_SUPPLIER],
  options: authorityNodeOptions,
  register: (ctx) =>
    ctx.provide(AUTHORITY_NODE, {
      useFactory: (resolve) => newAuthorityNode('dc', ctx.options, resolve),
    }),
});

/** The node of either mode: what every node needs, then what only its mode adds. */
function newAuthorityNode(
  mode: AuthorityNodeOptions['mode'],
  options: AuthorityNodeOptions,
  resolve: Resolve,
  modeDeps: () => Omit<
    AuthorityNodeDeps,
    'options' | 'clock' | 'rng' | 'log' | 'identity' | 'metrics' | 'tracing'
  > = () => ({}),
): AuthorityNode {
  return new AuthorityNode({
    options: { ...options, mode },
    clock: resolve(CLOCK),
    rng: resolve(RNG),
    log: resolve(LOGGER).child({ member: options.self }),
    identity: resolve(IDENTITY_SUPPLIER),
    peerAuth: resolveOptional(resolve, PEER_AUTH),
    ...modeDeps(),
    metrics: resolveOptional(resolve, METRICS),
    tracing: resolveOptional(resolve, TRACING),
  });
}
