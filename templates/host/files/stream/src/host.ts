import { metricsPlugin, peerAuthPlugin } from '@baton/http';
import { createHost, type HostBuilder, systemDefaults } from '@baton/kernel';
import { pinoLoggerPlugin } from '@baton/plugin-pino';
import { streamNodePlugin, streamStateMachinePlugin } from '@baton/stream-transfer';
import { raftPeerRoutesPlugin, httpPeerTransportPlugin } from '@baton/plugin-raft';
{{pluginImports}}
import type { HostConfig } from './config.js';

/**
 * The composition root of {{name}}: a stream node and the plugins chosen for it. A host is a
 * list: the system defaults (clock, randomness, logs), metrics, the stream metadata state
 * machine, then each plugin with its section of the config. The consensus members talk over
 * HTTP, served on the node's own listener. To swap a plugin, replace its line (and its config
 * section); the build fails at start, naming the token, if a contract is left without a provider.
 */
export function hostBuilder(config: HostConfig): HostBuilder {
  return createHost(systemDefaults)
    .add(pinoLoggerPlugin, config.log, 'log')
    .add(metricsPlugin, config.metrics, 'metrics')
    // Every peer must prove who it is: a node with peers and no peerAuth (nor insecure: true) refuses to start.
    .add(peerAuthPlugin, { self: config.node.self, peers: Object.keys((config.peerTransport.peers as object | undefined) ?? {}), peerAuth: config.peerAuth, insecure: config.insecure }, 'peerAuth')
    .add(httpPeerTransportPlugin, config.peerTransport, 'peerTransport')
    .add(raftPeerRoutesPlugin)
    .add(streamStateMachinePlugin)
    .add({{objectStorePlugin}}, config.objectStore, 'objectStore')
    .add({{consensusPlugin}}, config.consensus, 'consensus')
    .add(streamNodePlugin, config.node, 'node');
}
