import { AUTHORITY_NODE, authorityNodeDcPlugin, authorityNodeHaPlugin, ownershipStateMachinePlugin } from '../../framework/authority-transfer/plugins.js';
import type { AuthorityNode } from '../../framework/authority-transfer/authority-node.js';
import { PluginCatalog } from '../../framework/kernel/catalog.js';
import { loadConfig, validateConfig, type LoadConfigOptions } from '../../framework/kernel/config.js';
import { createHost, type Host, type HostBuilder } from '../../framework/kernel/host.js';
import { pinoLoggerPlugin, systemDefaults } from '../../framework/kernel/system-plugins.js';
import { fsAuditStorePlugin } from '../../plugins/fs/plugins.js';
import { npmIdentityPlugin, ociIdentityPlugin, opaqueIdentityPlugin, pypiIdentityPlugin } from '../../plugins/identity/index.js';
import { memoryAuditStorePlugin } from '../../plugins/memory/plugins.js';
import { httpPeerTransportPlugin, raftConsensusPlugin } from '../../plugins/raft/plugin.js';
import { redisAuditStorePlugin } from '../../plugins/redis/plugin.js';
import { raftPeerRoutesPlugin } from './raft-peer-routes.js';
import { authorityNodeHostConfig, type AuthorityNodeHostConfig } from './config.js';
import { singleMemberConsensusPlugin } from './single-member-consensus.js';

/** The plugins a config file may choose among, by id. */
export const authorityNodeCatalog = new PluginCatalog([
  singleMemberConsensusPlugin,
  raftConsensusPlugin,
  httpPeerTransportPlugin,
  memoryAuditStorePlugin,
  fsAuditStorePlugin,
  redisAuditStorePlugin,
  opaqueIdentityPlugin,
  npmIdentityPlugin,
  pypiIdentityPlugin,
  ociIdentityPlugin,
]);

/**
 * The composition root of the authority-transfer variant: system defaults, then the chosen
 * identity, audit store and consensus, then the node for its mode. Returns the builder so a
 * test can override a token (`.value(FRONTIER_PROBE, fake)`) before building.
 */
export function authorityNodeHostBuilder(raw: unknown, catalog = authorityNodeCatalog): HostBuilder {
  const config: AuthorityNodeHostConfig = validateConfig(authorityNodeHostConfig, raw, 'authority node config');
  const mode = config.node.mode === 'dc' ? 'dc' : 'ha';
  const builder = createHost(systemDefaults).add(pinoLoggerPlugin, config.log, 'log');
  const [identity] = catalog.resolve([config.identity], 'identity');
  builder.add(identity.plugin, identity.options, 'identity.options');
  if (mode === 'ha') {
    const self = typeof config.node.self === 'string' ? config.node.self : undefined;
    const [audit] = catalog.resolve([config.auditStore], 'auditStore');
    // The consensus member id is the node's id unless the config says otherwise.
    const consensusChoice = {
      ...config.consensus,
      options: config.consensus.use === 'single-member-consensus' ? { self, ...config.consensus.options } : config.consensus.options,
    };
    const [consensus] = catalog.resolve([consensusChoice], 'consensus');
    if (config.peerTransport) {
      const [transport] = catalog.resolve([config.peerTransport], 'peerTransport');
      builder.add(transport.plugin, transport.options, 'peerTransport.options');
      // Raft traffic arrives at the public server the roster names.
      if (transport.plugin.id === 'raft-http-transport') builder.add(raftPeerRoutesPlugin);
    }
    builder
      .add(ownershipStateMachinePlugin)
      .add(audit.plugin, audit.options, 'auditStore.options')
      .add(consensus.plugin, consensus.options, 'consensus.options')
      .add(authorityNodeHaPlugin, config.node, 'node');
  } else {
    builder.add(authorityNodeDcPlugin, config.node, 'node');
  }
  return builder;
}

/** Builds and starts a node; the caller stops it with `host.stop()`. */
export async function startAuthorityNode(raw: unknown): Promise<{ host: Host; node: AuthorityNode }> {
  const host = authorityNodeHostBuilder(raw).build();
  await host.start();
  return { host, node: host.get(AUTHORITY_NODE) };
}

/** Reads a config file (with BATON__ environment overrides) and starts the node it describes. */
export async function startAuthorityNodeFromFile(options: LoadConfigOptions): Promise<{ host: Host; node: AuthorityNode }> {
  return startAuthorityNode(await loadConfig(authorityNodeHostConfig, options));
}
