import { join } from 'node:path';
import { PluginCatalog, type PluginChoice, warnIfReadableByOthers, validateConfig, type LoadConfigOptions, checkHostConfig, loadHostConfig, ConfigError, createHost, type Host, type HostBuilder, systemDefaults } from '@baton/kernel';
import { pinoLoggerPlugin } from '@baton/plugin-pino';
import { LOGGER } from '@baton/contracts';
import { metricsPlugin, peerAuthPlugin, tracingPlugin } from '@baton/http';
import {
  STREAM_NODE,
  streamNodePlugin,
  streamStateMachinePlugin,
  type StreamNodeService,
} from '@baton/stream-transfer';
import { fsAuditStorePlugin, fsObjectStorePlugin } from '@baton/plugin-fs';
import { memoryAuditStorePlugin, memoryObjectStorePlugin } from '@baton/plugin-memory';
import { s3ObjectStorePlugin } from '@baton/plugin-minio';
import { streamNodeHostConfig, type StreamNodeHostConfig } from './config.js';
import { etcdConsensusPlugin } from '@baton/plugin-etcd';
import { httpPeerTransportPlugin, raftConsensusPlugin, raftPeerRoutesPlugin } from '@baton/plugin-raft';

/** The plugins a config file may choose among, by id. */
export const streamNodeCatalog = new PluginCatalog([
  raftConsensusPlugin,
  httpPeerTransportPlugin,
  etcdConsensusPlugin,
  memoryObjectStorePlugin,
  fsObjectStorePlugin,
  s3ObjectStorePlugin,
  memoryAuditStorePlugin,
  fsAuditStorePlugin,
]);

/** What a stream node's config file holds, section by section: what checkHostConfig reads. */
export function streamNodeConfigShape(catalog = streamNodeCatalog) {
  return { schema: streamNodeHostConfig, sections: { node: streamNodePlugin.options }, choices: ['consensus', 'peerTransport', 'objectStore', 'auditStore'], catalog };
}

/** Reads a stream node's config file (and environment overrides), every problem of it reported at once. */
export function loadStreamNodeConfig(options: LoadConfigOptions): Promise<StreamNodeHostConfig> {
  return loadHostConfig(streamNodeConfigShape(), options);
}

/**
 * The composition root of the stream-transfer variant: system defaults, the stream state
 * machine, then the chosen object store and consensus, then the node. Returns the builder so a
 * test can override a token (e.g. `.value(METADATA_CONSENSUS, shared)`) before building.
 */
export function streamNodeHostBuilder(raw: unknown, catalog = streamNodeCatalog): HostBuilder {
  // Every problem of the file at once, before the first one stops the build.
  checkHostConfig(streamNodeConfigShape(catalog), raw, 'stream node config');
  const config: StreamNodeHostConfig = validateConfig(streamNodeHostConfig, raw, 'stream node config');
  const self = config.node.self;
  if (typeof self !== 'string' || self === '') {
    // Checked here because the consensus member id defaults to it, before the node validates it.
    throw new ConfigError("invalid stream node config: node.self: give this node's id (e.g. \"n1\")");
  }
  const [store] = catalog.resolve([config.objectStore ?? defaultObjectStore(config.dataDir)], 'objectStore');
  const [audit] = catalog.resolve([config.auditStore ?? defaultAuditStore(config.dataDir)], 'auditStore');
  const [consensus] = catalog.resolve([withConsensusDefaults(config.consensus, self) ?? defaultConsensus(self, config.dataDir)], 'consensus');
  // Only the default lone voter gets a default transport: a chosen Raft with more voters must
  // say how to reach them, or the build fails naming the PeerTransport.
  const peerTransport = config.peerTransport ?? (config.consensus ? undefined : lonePeerTransport(self));
  const builder = createHost(systemDefaults);
  // Early in the list, so it is started before and stopped (flushed) after what makes spans.
  if (config.tracing) builder.add(tracingPlugin, { ...config.tracing, member: self }, 'tracing');
  builder.add(peerAuthPlugin, { self, peers: transportPeers(peerTransport), peerAuth: config.peerAuth, insecure: config.insecure }, 'peerAuth');
  if (peerTransport) {
    const [transport] = catalog.resolve([peerTransport], 'peerTransport');
    builder.add(transport.plugin, transport.options, 'peerTransport.options');
    // Raft traffic arrives on the node's own listener, the address its peers are configured with.
    if (transport.plugin.id === 'raft-http-transport') builder.add(raftPeerRoutesPlugin);
  }
  return builder
    .add(pinoLoggerPlugin, config.log, 'log')
    // Every series carries the node id: several nodes may share one scrape job.
    .add(metricsPlugin, { labels: { node: self } }, 'metrics')
    .add(streamStateMachinePlugin)
    .add(store.plugin, store.options, 'objectStore.options')
    .add(audit.plugin, audit.options, 'auditStore.options')
    .add(consensus.plugin, consensus.options, 'consensus.options')
    .add(streamNodePlugin, config.node, 'node');
}

/** The members a Raft HTTP transport talks to: each must be authenticated. */
function transportPeers(choice: PluginChoice | undefined): string[] {
  const peers = choice?.use === 'raft-http-transport' ? (choice.options as { peers?: unknown } | undefined)?.peers : undefined;
  return peers && typeof peers === 'object' ? Object.keys(peers) : [];
}

/** An etcd member is named by the node's id unless the config names it otherwise. */
function withConsensusDefaults(choice: PluginChoice | undefined, self: string): PluginChoice | undefined {
  if (choice?.use !== 'etcd-consensus') return choice;
  return { use: choice.use, options: { memberId: self, ...choice.options } };
}

/**
 * A Raft whose only voter is this node: durable under `<dataDir>/raft`, so streams, owners and
 * epochs survive a restart; with `dataDir: null` its log is in memory and a restart loses them.
 * The same plugin grows into a cluster by listing more voters and peers in the config.
 */
function defaultConsensus(self: string, dataDir: string | null): PluginChoice {
  return { use: 'raft', options: { member: self, voters: [self], ...(dataDir === null ? {} : { dataDir: join(dataDir, 'raft') }) } };
}

/** A lone voter sends nothing, but the transport is what the raft plugin requires. */
function lonePeerTransport(self: string): PluginChoice {
  return { use: 'raft-http-transport', options: { member: self, peers: {} } };
}

function defaultObjectStore(dataDir: string | null): PluginChoice {
  return dataDir === null ? { use: 'memory-object-store' } : { use: 'fs-object-store', options: { dir: join(dataDir, 'objects') } };
}

/** The audit trail this member keeps: files under `<dataDir>/audit`, or memory when dataDir is null. */
function defaultAuditStore(dataDir: string | null): PluginChoice {
  return dataDir === null ? { use: 'memory-audit-store' } : { use: 'fs-audit-store', options: { dir: dataDir } };
}

/** Builds and starts a node; the caller stops it with `host.stop()`. */
export async function startStreamNode(raw: unknown): Promise<{ host: Host; node: StreamNodeService }> {
  const host = streamNodeHostBuilder(raw).build();
  await host.start();
  return { host, node: host.get(STREAM_NODE) };
}

/** Reads a config file (with BATON__ environment overrides) and starts the node it describes. */
export async function startStreamNodeFromFile(options: LoadConfigOptions): Promise<{ host: Host; node: StreamNodeService }> {
  const started = await startStreamNode(await loadStreamNodeConfig(options));
  // The file holds tokens and the peer secret: say so when others can read it.
  if (options.file) warnIfReadableByOthers(options.file, 'config file', started.host.get(LOGGER));
  return started;
}
