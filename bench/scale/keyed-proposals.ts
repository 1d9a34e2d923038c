// Part "keyed-proposals": what an idempotency key costs. Three in-process members (memory
// storage), the kv register, the default snapshot interval and a full window (10,000 keys), at
// concurrency 64 for 4 s: proposals/s and p99 without keys, then with a fresh key each. A window
// that was cloned whole at every snapshot made keyed proposals cost several times plain ones.
import { createSilentLogger } from '../../framework/kernel/pino-logger.js';
import { SystemClock } from '../../framework/kernel/system-clock.js';
import { SystemRng } from '../../framework/kernel/system-rng.js';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '../../framework/testing/fakes/kv-state-machine.js';
import { RaftConsensus } from '../../plugins/raft/driver/raft-consensus.js';
import { MemoryRaftStorage } from '../../plugins/raft/storage/memory-storage.js';
import { InProcessNetwork } from '../consensus/in-process.js';
import { runLoad, waitUntil } from '../consensus/load.js';
import type { ScaleRow } from './rows.js';

const SECONDS = process.env.BENCH_QUICK === '1' ? 1 : 4;

async function measure(keyed: boolean): Promise<ScaleRow> {
  const ids = ['k1', 'k2', 'k3'];
  const net = new InProcessNetwork();
  const members = ids.map(
    (id) =>
      new RaftConsensus<KvState, KvCommand, KvResult>({
        self: id,
        voters: ids,
        machine: kvStateMachine,
        storage: new MemoryRaftStorage(),
        transport: net.transport(id),
        clock: new SystemClock(),
        rng: new SystemRng(),
        logger: createSilentLogger(),
        maxQueue: 100_000,
      }),
  );
  for (const m of members) await m.start();
  try {
    await waitUntil(() => members.some((m) => m.leadership().isLeader), 10_000, 'no in-process leader elected');
    const leader = members.find((m) => m.leadership().isLeader)!;
    const s = await runLoad(64, SECONDS, (w, n) =>
      leader.propose({ op: 'put', key: `k${w}`, value: String(n) }, keyed ? { idempotencyKey: `w${w}-n${n}` } : {}),
    );
    return { part: 'keyed-proposals', name: keyed ? 'keyed' : 'plain', perSec: s.proposalsPerSec, p50Ms: s.p50Ms, p99Ms: s.p99Ms, snapshotsTaken: leader.stats.snapshotsTaken };
  } finally {
    for (const m of members) await m.stop();
  }
}

export async function run(): Promise<ScaleRow[]> {
  const plain = await measure(false);
  const keyed = await measure(true);
  keyed.keyedOverPlain = Number(((keyed.perSec as number) / (plain.perSec as number)).toFixed(2));
  return [plain, keyed];
}
