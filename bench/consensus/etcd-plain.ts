// Setup (c): plain etcd, driven through the etcd3 client with plain puts (each one durable on a
// quorum: etcd fsyncs its WAL before it acknowledges). The client is given every member's
// endpoint, as a deployment would; followers forward puts to the leader.
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { runLoad, type LoadSummary } from './load.js';

export async function benchPlainEtcd(cluster: EtcdCluster, concurrencies: number[], seconds: number): Promise<LoadSummary[]> {
  const client = new Etcd3({ hosts: cluster.endpoints });
  try {
    // The first request opens the connections; keep it out of the measurement.
    await client.put('bench/warm').value('1');
    const results: LoadSummary[] = [];
    for (const concurrency of concurrencies) {
      results.push(await runLoad(concurrency, seconds, (w, n) => client.put(`bench/plain/k${w}`).value(String(n)).exec()));
    }
    return results;
  } finally {
    client.close();
  }
}
