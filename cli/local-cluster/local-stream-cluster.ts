import { fileURLToPath } from 'node:url';
import { allNodes } from '../streams/all-pages.js';
import { streamNode } from '../streams/stream-api.js';
import { LOCAL_NODE_IDS } from './cluster-record.js';
import {
  startLocalCluster,
  type LocalCluster,
  type LocalClusterVariant,
  type LocalNodeConfig,
  type StartOptions,
} from './local-cluster.js';
import { writeStreamNodeConfigs } from './stream-node-configs.js';

export type LocalStreamCluster = LocalCluster<LocalNodeConfig>;

/** Three stream nodes n1, n2, n3, one port each: the node's API, which carries Raft traffic too. */
export const streamClusterVariant: LocalClusterVariant<LocalNodeConfig> = {
  variant: 'stream',
  entryPoint: fileURLToPath(import.meta.resolve('@baton/host-stream-node/main')),
  portKeys: LOCAL_NODE_IDS,
  writeConfigs: writeStreamNodeConfigs,
  // Ready once every node answers and lists all three registered: any node then takes a create.
  ready: (nodes, record, fetch) => allRegistered(nodes, record.token, fetch),
};

/**
 * Starts three stream nodes as processes on loopback, voters of one Raft over HTTP, and waits
 * until every node answers and lists all three as registered.
 */
export function startLocalStreamCluster(options: StartOptions): Promise<LocalStreamCluster> {
  return startLocalCluster(streamClusterVariant, options);
}

async function allRegistered(configs: readonly LocalNodeConfig[], token: string, fetch: typeof globalThis.fetch): Promise<boolean> {
  const ids = configs.map((config) => config.id);
  for (const config of configs) {
    try {
      const { nodes } = await allNodes(streamNode({ url: config.url, token, fetch }));
      if (!ids.every((id) => nodes.some((node) => node.id === id))) return false;
    } catch {
      // Not listening yet, or no leader yet: keep waiting.
      return false;
    }
  }
  return true;
}
