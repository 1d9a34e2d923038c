// Setup (d): the plugins/etcd consensus (EtcdConsensus), three members sharing one log in the same
// etcd cluster as (c); proposals go to the member that leads. Each proposal is an etcd
// transaction appending one log entry, then applied when the member sees it come back.
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '@baton/conformance/internal/kv-state-machine.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { EtcdConsensus } from '@baton/plugin-etcd/internal/etcd-consensus.js';
import { etcdConsensusOptions } from '@baton/plugin-etcd/internal/options.js';
import { runLoad, waitUntil, type LoadSummary } from './load.js';

export async function benchEtcdPlugin(cluster: EtcdCluster, concurrencies: number[], seconds: number): Promise<LoadSummary[]> {
  const results: LoadSummary[] = [];
  for (const concurrency of concurrencies) {
    // A fresh log per concurrency, as the raft setups get a fresh cluster.
    const prefix = `bench/plugin-${concurrency}/`;
    const ids = ['e1', 'e2', 'e3'];
    const members = ids.map(
      (memberId, i) =>
        new EtcdConsensus<KvState, KvCommand, KvResult>(
          etcdConsensusOptions.parse({
            endpoints: cluster.endpoints,
            prefix,
            memberId,
            initialVoters: ids,
            maxPendingProposals: 100_000,
          }),
          { machine: kvStateMachine, clock: new SystemClock(), rng: new SeededRng(1000 + i), logger: createSilentLogger() },
        ),
    );
    await Promise.all(members.map((m) => m.start()));
    try {
      await waitUntil(() => members.some((m) => m.leadership().isLeader), 20_000, 'no etcd-consensus leader elected');
      const leader = members.find((m) => m.leadership().isLeader)!;
      results.push(await runLoad(concurrency, seconds, (w, n) => leader.propose({ op: 'put', key: `k${w}`, value: String(n) })));
    } finally {
      await Promise.all(members.map((m) => m.stop()));
    }
  }
  return results;
}
