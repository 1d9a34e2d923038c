// Part "keyed-proposals": what an idempotency key costs. Three in-process members (memory
// storage), the kv register, the default snapshot interval and a full window (10,000 keys), at
// concurrency 64 for 4 s: proposals/s and p99 without keys, then with a fresh key each. A window
// that was cloned whole at every snapshot made keyed proposals cost several times plain ones.
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '@baton/conformance/internal/kv-state-machine.js';
import { startInProcessCluster } from '../consensus/in-process-cluster.js';
import { runLoad } from '../consensus/load.js';
import type { ScaleRow } from './rows.js';

const SECONDS = process.env.BENCH_QUICK === '1' ? 1 : 4;

async function measure(keyed: boolean): Promise<ScaleRow> {
  const { leader, stop } = await startInProcessCluster<KvState, KvCommand, KvResult>({ ids: ['k1', 'k2', 'k3'], machine: kvStateMachine });
  try {
    const s = await runLoad(64, SECONDS, (w, n) =>
      leader.propose({ op: 'put', key: `k${w}`, value: String(n) }, keyed ? { idempotencyKey: `w${w}-n${n}` } : {}),
    );
    return { part: 'keyed-proposals', name: keyed ? 'keyed' : 'plain', perSec: s.proposalsPerSec, p50Ms: s.p50Ms, p99Ms: s.p99Ms, snapshotsTaken: leader.stats.snapshotsTaken };
  } finally {
    await stop();
  }
}

export async function run(): Promise<ScaleRow[]> {
  const plain = await measure(false);
  const keyed = await measure(true);
  keyed.keyedOverPlain = Number(((keyed.perSec as number) / (plain.perSec as number)).toFixed(2));
  return [plain, keyed];
}
