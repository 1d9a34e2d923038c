import {
  authorityNodeHaPlugin,
  ownershipStateMachinePlugin,
  rosterMemberIds,
} from '@baton/authority-transfer';
import { createHost, type HostBuilder, systemDefaults } from '@baton/kernel';
import { pinoLoggerPlugin } from '@baton/plugin-pino';
import { peerAuthPlugin } from '@baton/http';
{{pluginImports}}
import type { HostConfig } from './config.js';

/**
 * The composition root of {{name}}: an authority node (mode ha) and the plugins chosen for it.
 * A host is a list: the system defaults (clock, randomness, logs), then each plugin with its
 * section of the config. To swap a plugin, replace its line (and its config section); the
 * build fails at start, naming the token, if a contract is left without a provider.
 */
export function hostBuilder(config: HostConfig): HostBuilder {
  return createHost(systemDefaults)
    .add(pinoLoggerPlugin, config.log, 'log')
    // Every peer must prove who it is: a node with peers and no peerAuth (nor insecure: true) refuses to start.
    .add(peerAuthPlugin, { self: config.node.self, peers: rosterMemberIds(config.node.roster), peerAuth: config.peerAuth, insecure: config.insecure }, 'peerAuth')
    .add({{identityPlugin}}, config.identity, 'identity')
    .add(ownershipStateMachinePlugin)
    .add({{auditStorePlugin}}, config.auditStore, 'auditStore')
    .add({{consensusPlugin}}, config.consensus, 'consensus')
    .add(authorityNodeHaPlugin, config.node, 'node');
}
