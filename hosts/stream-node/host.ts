import { PluginCatalog } from '../../framework/kernel/catalog.js';
import { loadConfig, validateConfig, type LoadConfigOptions } from '../../framework/kernel/config.js';
import { ConfigError } from '../../framework/kernel/wiring-error.js';
import { createHost, type Host, type HostBuilder } from '../../framework/kernel/host.js';
import { pinoLoggerPlugin, systemDefaults } from '../../framework/kernel/system-plugins.js';
import { STREAM_NODE, streamNodePlugin, streamStateMachinePlugin } from '../../framework/stream-transfer/plugins.js';
import type { StreamNodeService } from '../../framework/stream-transfer/stream-node-service.js';
import { fsObjectStorePlugin } from '../../plugins/fs/plugins.js';
import { memoryObjectStorePlugin } from '../../plugins/memory/plugins.js';
import { s3ObjectStorePlugin } from '../../plugins/minio/plugin.js';
import { streamNodeHostConfig, type StreamNodeHostConfig } from './config.js';
import { singleMemberConsensusPlugin } from './single-member-consensus.js';
import { streamRaftPeerRoutesPlugin } from './raft-peer-routes.js';
import { etcdConsensusPlugin } from '../../plugins/etcd/plugin.js';
import { httpPeerTransportPlugin, raftConsensusPlugin } from '../../plugins/raft/plugin.js';

/** The plugins a config file may choose among, by id. */
export const streamNodeCatalog = new PluginCatalog([
  singleMemberConsensusPlugin,
  raftConsensusPlugin,
  httpPeerTransportPlugin,
  etcdConsensusPlugin,
  memoryObjectStorePlugin,
  fsObjectStorePlugin,
  s3ObjectStorePlugin,
]);

/**
 * The composition root of the stream-transfer variant: system defaults, the stream state
 * machine, then the chosen object store and consensus, then the node. Returns the builder so a
 * test can override a token (e.g. `.value(METADATA_CONSENSUS, shared)`) before building.
 */
export function streamNodeHostBuilder(raw: unknown, catalog = streamNodeCatalog): HostBuilder {
  const config: StreamNodeHostConfig = validateConfig(streamNodeHostConfig, raw, 'stream node config');
  const self = config.node.self;
  if (typeof self !== 'string' || self === '') {
    // Checked here because the consensus member id defaults to it, before the node validates it.
    throw new ConfigError("invalid stream node config: node.self: give this node's id (e.g. \"n1\")");
  }
  const [store] = catalog.resolve([config.objectStore], 'objectStore');
  // The consensus member id is the node's id unless the config says otherwise.
  const consensusChoice = {
    ...config.consensus,
    options: config.consensus.use === 'single-member-consensus' ? { self, ...config.consensus.options } : config.consensus.options,
  };
  const [consensus] = catalog.resolve([consensusChoice], 'consensus');
  const builder = createHost(systemDefaults);
  if (config.peerTransport) {
    const [transport] = catalog.resolve([config.peerTransport], 'peerTransport');
    builder.add(transport.plugin, transport.options, 'peerTransport.options');
    // Raft traffic arrives on the node's own listener, the address its peers are configured with.
    if (transport.plugin.id === 'raft-http-transport') builder.add(streamRaftPeerRoutesPlugin);
  }
  return builder
    .add(pinoLoggerPlugin, config.log, 'log')
    .add(streamStateMachinePlugin)
    .add(store.plugin, store.options, 'objectStore.options')
    .add(consensus.plugin, consensus.options, 'consensus.options')
    .add(streamNodePlugin, config.node, 'node');
}

/** Builds and starts a node; the caller stops it with `host.stop()`. */
export async function startStreamNode(raw: unknown): Promise<{ host: Host; node: StreamNodeService }> {
  const host = streamNodeHostBuilder(raw).build();
  await host.start();
  return { host, node: host.get(STREAM_NODE) };
}

/** Reads a config file (with BATON__ environment overrides) and starts the node it describes. */
export async function startStreamNodeFromFile(options: LoadConfigOptions): Promise<{ host: Host; node: StreamNodeService }> {
  return startStreamNode(await loadConfig(streamNodeHostConfig, options));
}
