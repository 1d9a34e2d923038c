// Part "consensus-in-process": three Raft members in one process (memory storage, the in-process
// transport of bench/consensus), the real variant state machines, N creates through consensus at
// concurrency 256: N streams (10 nodes registered first), then N authorities on a fresh cluster.
// Reported: creates/s over the whole run, over the first and the last 10%, the Raft term before
// and after and how many leadership changes any member saw (the goal: none), snapshots taken,
// the longest event-loop block, heap. Then, on the stream cluster, a node owning 10,000 streams
// (BENCH_SCALE_DRAIN_N) is drained through the consensus (goal: done within 10 s), and the term
// is read again. BENCH_SCALE_N sets N (default 1,000,000);
// BENCH_SCALE_AUTHORITIES_N the authorities' N when it must differ (a state machine without
// `capture` copies its whole state at every snapshot, which at a million does not fit a run).
import { performance } from 'node:perf_hooks';
import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { startInProcessCluster } from '../consensus/in-process-cluster.js';
import { waitUntil } from '../consensus/load.js';
import { heapMb, largestSize, longestBlockMs, type ScaleRow } from './rows.js';

const CONCURRENCY = 256;

/** Streams the drained node owns, and how many transfers a drain keeps in flight. */
const DRAINED_STREAMS = Number(process.env.BENCH_SCALE_DRAIN_N ?? 10_000);
const DRAIN_IN_FLIGHT = 32;

/**
 * After the creates: a node owning DRAINED_STREAMS streams is drained through the consensus,
 * each transfer settled as its source's watcher would (close at the epoch, then complete; the
 * complete starts the drain's next move). The figure is the time from the drain command to the
 * node owning nothing.
 */
async function drainThroughConsensus(leader: RaftConsensus<any, any, any>): Promise<Record<string, number>> {
  await leader.propose({ type: 'register-node', node: 'drained', address: 'http://10.0.1.1:8080', slots: DRAINED_STREAMS });
  let next = 0;
  const create = async () => {
    for (let i = next++; i < DRAINED_STREAMS; i = next++) await leader.propose({ type: 'create-stream', stream: `drained-${i}`, node: 'drained' });
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, create));
  const owned = () => (leader.view().state as { ownedCount(node: string): number }).ownedCount('drained');
  if (owned() !== DRAINED_STREAMS) throw new Error(`the drained node owns ${owned()} streams, not ${DRAINED_STREAMS}`);
  const started = performance.now();
  const drain = await leader.propose({ type: 'drain', node: 'drained', maxInFlight: DRAIN_IN_FLIGHT });
  const queue: string[] = [...((drain.result as { started?: string[] }).started ?? [])];
  let settled = 0;
  const settle = async (stream: string) => {
    const state = leader.view().state as { transfer(s: string): any; stream(s: string): any };
    const pending = state.transfer(stream);
    const record = state.stream(stream);
    await leader.propose({ type: 'close', stream, node: pending.source, epoch: record.epoch, tail: record.tail, producers: record.producers });
    const done = await leader.propose({ type: 'complete', stream, source: pending.source, target: pending.target, epoch: record.epoch });
    settled++;
    queue.push(...((done.result as { started?: string[] }).started ?? []));
  };
  // One settler per move in flight: each takes the next started transfer as it appears.
  const settler = async () => {
    while (owned() > 0) {
      const stream = queue.shift();
      if (stream) await settle(stream);
      else await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  await Promise.all(Array.from({ length: DRAIN_IN_FLIGHT }, settler));
  return { drainedStreams: DRAINED_STREAMS, drainSeconds: Number(((performance.now() - started) / 1000).toFixed(2)), drainSettled: settled };
}

async function createThroughConsensus(
  name: string,
  machine: StateMachine<any, any, any>,
  setup: unknown[],
  command: (i: number) => unknown,
  n: number,
  after?: (leader: RaftConsensus<any, any, any>) => Promise<Record<string, number>>,
): Promise<ScaleRow> {
  const { members, leader, stop } = await startInProcessCluster<any, any, any>({ ids: ['s1', 's2', 's3'], machine });
  let leadershipChanges = 0;
  try {
    const termBefore = leader.leadership().term;
    for (const m of members) m.onLeadership(() => leadershipChanges++);
    for (const c of setup) await leader.propose(c);
    const tenth = Math.max(1, Math.floor(n / 10));
    const marks: number[] = [];
    let next = 0;
    let refused = 0;
    const started = performance.now();
    const { longestBlockMs: block } = await longestBlockMs(async () => {
      const worker = async () => {
        for (let i = next++; i < n; i = next++) {
          if (i % tenth === 0) marks.push(performance.now());
          const receipt = await leader.propose(command(i));
          if ((receipt.result as { ok?: boolean }).ok === false) refused++;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    });
    const elapsed = (performance.now() - started) / 1000;
    marks.push(performance.now());
    const rate = (from: number, to: number) => Math.round(tenth / ((marks[to] - marks[from]) / 1000));
    await waitUntil(() => members.every((m) => m.view().applied.index === leader.view().applied.index), 60_000, 'followers to apply');
    const termAfterCreates = Math.max(...members.map((m) => m.leadership().term));
    const extra = after ? await after(leader) : {};
    return {
      part: 'consensus-in-process',
      name: `${name} ${n.toLocaleString('en-US')}`,
      creates: n,
      refused,
      seconds: Number(elapsed.toFixed(1)),
      createsPerSec: Math.round(n / elapsed),
      first10PctPerSec: rate(0, 1),
      last10PctPerSec: rate(marks.length - 2, marks.length - 1),
      termBefore,
      termAfter: termAfterCreates,
      ...extra,
      termAfterAll: Math.max(...members.map((m) => m.leadership().term)),
      leadershipChanges,
      snapshotsTaken: leader.stats.snapshotsTaken,
      loopYields: leader.stats.loopYields,
      longestBlockMs: Number(block.toFixed(1)),
      heapMb: heapMb(),
    };
  } finally {
    await stop();
  }
}

export async function run(): Promise<ScaleRow[]> {
  const n = largestSize();
  const nodes = Array.from({ length: 10 }, (_, i) => ({ type: 'register-node', node: `node-${i}`, address: `http://10.0.0.${i}:8080`, slots: n }));
  return [
    await createThroughConsensus('streams', new StreamStateMachine(), nodes, (i) => ({ type: 'create-stream', stream: `stream-${i}` }), n, drainThroughConsensus),
    await createThroughConsensus('authorities', new OwnershipStateMachine(), [], (i) => ({ type: 'transfer_authority', authority: `authority-${i}`, target: `dc-${i % 3}` }), Number(process.env.BENCH_SCALE_AUTHORITIES_N ?? n)),
  ];
}
