// Consensus benchmark (a): three Raft voters in one process, memory storage, an in-process
// transport that hands messages over on the next microtask (as JSON, like a real wire).
// Measures committed proposals per second and commit latency (p50/p99) at several numbers of
// concurrent proposers. Not yet here: (b) three processes over HTTP with file storage and
// (c) etcd side by side.
// Run: npm run build && node dist/bench/consensus/run.js   (BENCH_QUICK=1 for a short run)
// Prints a human table, then one JSON line per configuration: {"bench":"consensus", ...}.
import { performance } from 'node:perf_hooks';
import type { MemberId, PeerHandlers, PeerMessage, PeerTransport } from '../../framework/contracts/peer-transport.js';
import { PeerUnreachableError } from '../../framework/contracts/peer-transport.js';
import { createSilentLogger } from '../../framework/kernel/pino-logger.js';
import { SystemClock } from '../../framework/kernel/system-clock.js';
import { SystemRng } from '../../framework/kernel/system-rng.js';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '../../framework/testing/fakes/kv-state-machine.js';
import { RaftConsensus } from '../../plugins/raft/driver/raft-consensus.js';
import { MemoryRaftStorage } from '../../plugins/raft/storage/memory-storage.js';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = QUICK ? 1 : 4;
const CONCURRENCY = QUICK ? [64] : [1, 64, 512];

/** Delivers on the next microtask, serialising bodies as JSON as a network would. */
class InProcessNetwork {
  private readonly handlers = new Map<MemberId, Map<string, PeerHandlers>>();
  transport(self: MemberId): PeerTransport {
    const handlers = this.handlers;
    const mine = new Map<string, PeerHandlers>();
    this.handlers.set(self, mine);
    return {
      self,
      send(to: MemberId, message: PeerMessage) {
        const json = JSON.stringify(message.body);
        queueMicrotask(() => handlers.get(to)?.get(message.channel)?.onMessage(self, { channel: message.channel, body: JSON.parse(json) }));
      },
      async request(to: MemberId, message: PeerMessage) {
        const h = handlers.get(to)?.get(message.channel);
        if (!h?.onRequest) throw new PeerUnreachableError(to, 'no handler');
        const answer = await h.onRequest(self, { channel: message.channel, body: JSON.parse(JSON.stringify(message.body)) });
        return { channel: answer.channel, body: JSON.parse(JSON.stringify(answer.body)) };
      },
      listen(channel: string, handlers: PeerHandlers) {
        mine.set(channel, handlers);
        return () => mine.delete(channel);
      },
    };
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(concurrency: number) {
  const clock = new SystemClock();
  const ids = ['b1', 'b2', 'b3'];
  const net = new InProcessNetwork();
  const members = ids.map(
    (id) =>
      new RaftConsensus<KvState, KvCommand, KvResult>({
        self: id,
        voters: ids,
        machine: kvStateMachine,
        storage: new MemoryRaftStorage(),
        transport: net.transport(id),
        clock,
        rng: new SystemRng(),
        logger: createSilentLogger(),
        maxQueue: 100_000,
        snapshotInterval: 50_000,
      }),
  );
  for (const m of members) await m.start();
  while (!members.some((m) => m.leadership().isLeader)) await clock.sleep(5);
  const leader = members.find((m) => m.leadership().isLeader)!;
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  const worker = async (w: number) => {
    while (performance.now() < end) {
      const started = performance.now();
      await leader.propose({ op: 'put', key: `k${w}`, value: String(n++) });
      latencies.push(performance.now() - started);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsed = (performance.now() - t0) / 1000;
  for (const m of members) await m.stop();
  latencies.sort((a, b) => a - b);
  return {
    bench: 'consensus',
    setup: 'in-process, 3 voters, memory storage',
    concurrency,
    proposals: latencies.length,
    proposalsPerSec: Math.round(latencies.length / elapsed),
    p50Ms: Number(percentile(latencies, 50).toFixed(3)),
    p99Ms: Number(percentile(latencies, 99).toFixed(3)),
  };
}

const results = [];
for (const c of CONCURRENCY) results.push(await run(c));
console.log('setup                                  concurrency  proposals/s   p50 ms   p99 ms');
for (const r of results) {
  console.log(
    `${r.setup.padEnd(38)} ${String(r.concurrency).padStart(11)} ${String(r.proposalsPerSec).padStart(12)} ${r.p50Ms.toFixed(2).padStart(8)} ${r.p99Ms.toFixed(2).padStart(8)}`,
  );
}
for (const r of results) console.log(JSON.stringify(r));
