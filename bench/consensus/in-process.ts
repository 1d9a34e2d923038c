// Setup (a): three Raft voters in one process, memory storage, the in-process transport of
// in-process-cluster.ts (Raft messages handed over by reference on the next microtask). Setup (b)
// measures the real wire.
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import { startInProcessCluster } from './in-process-cluster.js';
import { runLoad, type LoadSummary } from './load.js';

/** A fresh in-process cluster per concurrency, so one run's log does not slow the next. */
export async function benchInProcess(
  concurrencies: number[],
  seconds: number,
): Promise<LoadSummary[]> {
  const results: LoadSummary[] = [];
  for (const concurrency of concurrencies) {
    const cluster = await startInProcessCluster<KvState, KvCommand, KvResult>({
      ids: ['b1', 'b2', 'b3'],
      machine: kvStateMachine,
      snapshotInterval: 50_000,
    });
    try {
      results.push(
        await runLoad(concurrency, seconds, (w, n) =>
          cluster.leader.propose({ op: 'put', key: `k${w}`, value: String(n) }),
        ),
      );
    } finally {
      await cluster.stop();
    }
  }
  return results;
}
