import { readFile, writeFile } from 'node:fs/promises';
import { memberIdsOf, withPeerSecrets } from '@baton/cli/internal/local-cluster/peer-credentials.js';
import type { ExecutionContext } from 'ava';
import { newAdminToken, type ClusterRecord } from '@baton/cli/internal/local-cluster/cluster-record.js';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import type { LocalClusterVariant, LocalNodeConfig } from '@baton/cli/internal/local-cluster/local-cluster.js';
import { NodeProcess } from '@baton/cli/internal/local-cluster/node-process.js';
import { workDir } from '../../cli/temp-project.js';

export interface NodeProcesses<N extends LocalNodeConfig> {
  nodes: N[];
  record: ClusterRecord;
  /** The admin token every node accepts. */
  token: string;
  /** Stops one node (SIGTERM, then SIGKILL after the grace period). */
  stop(id: string): Promise<void>;
  /** Kills one node at once (SIGKILL): no graceful shutdown. */
  kill(id: string): Promise<void>;
  running(id: string): boolean;
  /** The process id of a member, to read its /proc entry. */
  pid(id: string): number | undefined;
}

/**
 * A variant's local cluster (the configs `baton up` writes) as real processes this test
 * controls one by one, so it can stop or kill a member and watch the others. Every process
 * still running is stopped after the test. With `tls` the members serve HTTPS (peers too) with
 * certificates of a cluster CA, `caFile` of every node.
 */
export async function startNodeProcesses<N extends LocalNodeConfig>(
  t: ExecutionContext,
  variant: LocalClusterVariant<N>,
  options: {
    tls?: boolean;
    /** Changes each member's config (as `baton up` wrote it) before the member starts. */
    configure?: (config: Record<string, any>, node: N) => void;
  } = {},
): Promise<NodeProcesses<N>> {
  const dataDir = await workDir(t);
  const ports = await freeLoopbackPorts(variant.portKeys.length);
  const record: ClusterRecord = {
    variant: variant.variant,
    ports: Object.fromEntries(variant.portKeys.map((key, i) => [key, ports[i]])),
    token: newAdminToken(),
    peerToken: newAdminToken(),
    peerSecrets: withPeerSecrets(undefined, memberIdsOf(variant.portKeys)),
    ...(options.tls ? { tls: true } : {}),
  };
  const nodes = await variant.writeConfigs(dataDir, record);
  if (options.configure) {
    for (const node of nodes) {
      const config = JSON.parse(await readFile(node.file, 'utf8')) as Record<string, any>;
      options.configure(config, node);
      await writeFile(node.file, JSON.stringify(config, null, 2), { mode: 0o600 });
    }
  }
  const processes = new Map(nodes.map((node) => [node.id, new NodeProcess(node.id, variant.entryPoint, node.file, node.logFile, node.caFile)]));
  t.teardown(async () => {
    for (const node of [...processes.values()].reverse()) await node.stop();
  });
  const process = (id: string) => {
    const found = processes.get(id);
    if (!found) throw new Error(`no node ${id} in this cluster`);
    return found;
  };
  return {
    nodes,
    record,
    token: record.token,
    stop: async (id) => void (await process(id).stop()),
    kill: async (id) => void (await process(id).kill()),
    running: (id) => process(id).running,
    pid: (id) => process(id).pid,
  };
}
