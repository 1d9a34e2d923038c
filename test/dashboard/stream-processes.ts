import type { ExecutionContext } from 'ava';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { eventually } from '../hosts/eventually.js';

/** Three stream node processes as `baton up` runs them, once all three are registered: n1 and the admin headers to use on it. */
export async function registeredStreamProcesses(t: ExecutionContext) {
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const [n1] = cluster.nodes;
  const admin = { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' };
  await eventually(async () => {
    const response = await fetch(`${n1!.url}/v1/admin/nodes`, { headers: admin });
    return response.ok && ((await response.json()) as { nodes: unknown[] }).nodes.length === 3;
  }, 'three registered nodes', 60_000);
  return { cluster, n1: n1!, admin };
}
