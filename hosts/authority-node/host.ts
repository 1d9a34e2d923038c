import {
  AUTHORITY_NODE,
  authorityNodeDcPlugin,
  authorityNodeHaPlugin,
  ownershipStateMachinePlugin,
  rosterMemberIds,
  type AuthorityNode,
} from '@baton/authority-transfer';
import { join } from 'node:path';
import { PluginCatalog, type PluginChoice, warnIfReadableByOthers, validateConfig, type LoadConfigOptions, checkHostConfig, loadHostConfig, createHost, type Host, type HostBuilder, systemDefaults } from '@baton/kernel';
import { pinoLoggerPlugin } from '@baton/plugin-pino';
import { metricsPlugin, peerAuthPlugin, tracingPlugin } from '@baton/http';
import { LOGGER } from '@baton/contracts';
import { fsAuditStorePlugin } from '@baton/plugin-fs';
import { npmIdentityPlugin, ociIdentityPlugin, opaqueIdentityPlugin, pypiIdentityPlugin } from '@baton/plugin-identity';
import { memoryAuditStorePlugin } from '@baton/plugin-memory';
import { etcdConsensusPlugin } from '@baton/plugin-etcd';
import { httpPeerTransportPlugin, raftConsensusPlugin, raftPeerRoutesPlugin, singleMemberConsensusPlugin } from '@baton/plugin-raft';
import { redisAuditStorePlugin } from '@baton/plugin-redis';
import { authorityNodeHostConfig, type AuthorityNodeHostConfig } from './config.js';

/** The plugins a config file may choose among, by id. */
export const authorityNodeCatalog = new PluginCatalog([
  singleMemberConsensusPlugin,
  raftConsensusPlugin,
  httpPeerTransportPlugin,
  etcdConsensusPlugin,
  memoryAuditStorePlugin,
  fsAuditStorePlugin,
  redisAuditStorePlugin,
  opaqueIdentityPlugin,
  npmIdentityPlugin,
  pypiIdentityPlugin,
  ociIdentityPlugin,
]);

/** What an authority node's config file holds, section by section: what checkHostConfig reads. */
export function authorityNodeConfigShape(catalog = authorityNodeCatalog) {
  return {
    schema: authorityNodeHostConfig,
    sections: { node: authorityNodeHaPlugin.options },
    choices: ['consensus', 'peerTransport', 'auditStore', 'identity'],
    catalog,
  };
}

/** Reads an authority node's config file (and environment overrides), every problem of it reported at once. */
export function loadAuthorityNodeConfig(options: LoadConfigOptions): Promise<AuthorityNodeHostConfig> {
  return loadHostConfig(authorityNodeConfigShape(), options);
}

/**
 * The composition root of the authority-transfer variant: system defaults and metrics, then the
 * chosen identity, audit store and consensus, then the node for its mode. Unless the config
 * chooses otherwise, everything durable lives under `dataDir`: a Raft whose voters are this
 * node alone (its log under raft/, HTTP transport to the roster's public addresses), the change
 * feed under feed/, the audit under audit/. Returns the builder so a test can override a token
 * (`.value(FRONTIER_PROBE, fake)`) before building.
 */
export function authorityNodeHostBuilder(raw: unknown, catalog = authorityNodeCatalog): HostBuilder {
  // Every problem of the file at once, before the first one stops the build.
  checkHostConfig(authorityNodeConfigShape(catalog), raw, 'authority node config');
  const config: AuthorityNodeHostConfig = validateConfig(authorityNodeHostConfig, raw, 'authority node config');
  const mode = config.node.mode === 'dc' ? 'dc' : 'ha';
  const self = typeof config.node.self === 'string' ? config.node.self : undefined;
  const under = (sub: string) => (config.dataDir === null ? undefined : join(config.dataDir, sub));
  const node = withFeedDir(config.node, under('feed'));
  const builder = createHost(systemDefaults)
    .add(pinoLoggerPlugin, config.log, 'log')
    .add(metricsPlugin, { labels: self ? { member: self } : undefined }, 'metrics');
  // Early in the list, so it is started before and stopped (flushed) after what makes spans.
  if (config.tracing) builder.add(tracingPlugin, { ...config.tracing, member: self ?? 'authority-node' }, 'tracing');
  if (self) {
    // Every roster member pulls this one's feed and probes it; Raft peers send to it.
    const peers = new Set(rosterMemberIds(config.node.roster));
    const raftPeers = config.peerTransport?.use === 'raft-http-transport' ? (config.peerTransport.options as { peers?: unknown } | undefined)?.peers : undefined;
    if (raftPeers && typeof raftPeers === 'object') for (const id of Object.keys(raftPeers)) peers.add(id);
    builder.add(peerAuthPlugin, { self, peers: [...peers], peerAuth: config.peerAuth, insecure: config.insecure }, 'peerAuth');
  }
  const [identity] = catalog.resolve([config.identity], 'identity');
  builder.add(identity.plugin, identity.options, 'identity.options');
  if (mode === 'dc') return builder.add(authorityNodeDcPlugin, node, 'node');

  const auditChoice = config.auditStore ?? (config.dataDir === null ? { use: 'memory-audit-store' } : { use: 'fs-audit-store', options: { dir: under('audit') } });
  const [audit] = catalog.resolve([auditChoice], 'auditStore');
  const consensusChoice = withConsensusDefaults(config.consensus ?? { use: 'raft' }, self, under('raft'));
  const [consensus] = catalog.resolve([consensusChoice], 'consensus');
  const transportChoice =
    config.peerTransport ?? (consensusChoice.use === 'raft' ? { use: 'raft-http-transport', options: { member: self, peers: rosterAddresses(config.node.roster) } } : undefined);
  if (transportChoice) {
    const [transport] = catalog.resolve([transportChoice], 'peerTransport');
    builder.add(transport.plugin, transport.options, 'peerTransport.options');
    // Raft traffic arrives at the public server the roster names.
    if (transport.plugin.id === 'raft-http-transport') builder.add(raftPeerRoutesPlugin);
  }
  return builder
    .add(ownershipStateMachinePlugin)
    .add(audit.plugin, audit.options, 'auditStore.options')
    .add(consensus.plugin, consensus.options, 'consensus.options')
    .add(authorityNodeHaPlugin, node, 'node');
}

/** The consensus member id is the node's id, and its log goes under the data dir, unless the config says otherwise. */
function withConsensusDefaults(choice: PluginChoice, self: string | undefined, dataDir: string | undefined): PluginChoice {
  const given = choice.options ?? {};
  if (choice.use === 'raft') {
    return { use: choice.use, options: { member: self, voters: self ? [self] : undefined, ...(dataDir ? { dataDir } : {}), ...given } };
  }
  if (choice.use === 'single-member-consensus') return { use: choice.use, options: { self, ...(dataDir ? { dataDir } : {}), ...given } };
  // etcd keeps the log itself: only the member id defaults, to the node's.
  if (choice.use === 'etcd-consensus') return { use: choice.use, options: { memberId: self, ...given } };
  return choice;
}

/** The node's feed directory defaults to `<dataDir>/feed`. */
function withFeedDir(node: Record<string, unknown>, dir: string | undefined): Record<string, unknown> {
  const feed = node.feed && typeof node.feed === 'object' ? (node.feed as Record<string, unknown>) : {};
  if (!dir || 'dir' in feed) return node;
  return { ...node, feed: { ...feed, dir } };
}

/** member -> public address, from the roster (the raft router is mounted on the public server). */
function rosterAddresses(roster: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!roster || typeof roster !== 'object') return out;
  for (const dc of Object.values(roster as Record<string, { members?: Record<string, { public?: unknown }> }>)) {
    for (const [id, member] of Object.entries(dc?.members ?? {})) {
      if (typeof member?.public === 'string') out[id] = member.public;
    }
  }
  return out;
}

/** Builds and starts a node; the caller stops it with `host.stop()`. */
export async function startAuthorityNode(raw: unknown): Promise<{ host: Host; node: AuthorityNode }> {
  const host = authorityNodeHostBuilder(raw).build();
  await host.start();
  return { host, node: host.get(AUTHORITY_NODE) };
}

/** Reads a config file (with BATON__ environment overrides) and starts the node it describes. */
export async function startAuthorityNodeFromFile(options: LoadConfigOptions): Promise<{ host: Host; node: AuthorityNode }> {
  const started = await startAuthorityNode(await loadAuthorityNodeConfig(options));
  // The file holds tokens and the peer secret: say so when others can read it.
  if (options.file) warnIfReadableByOthers(options.file, 'config file', started.host.get(LOGGER));
  return started;
}
