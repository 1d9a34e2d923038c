// Stream-transfer benchmark, memory plugins in one process (LocalConsensus, MemoryObjectStore,
// memory WAL), real time:
//  - unavailability window per transfer: the longest gap between acknowledged appends of a
//    client writing continuously through the handoff, p50/p99 over 100 transfers, for a quiet
//    stream (one writer, one small record at a time) and a busy one (8 writers, 100 x 1 KiB);
//  - time to drain a node that owns 1,000 streams;
//  - appends/s and MB/s of one node;
//  - time from a node's death to its 1,000 streams serving elsewhere (failover.ts), and the
//    same for a killed node process among three real ones (failover-processes.ts);
//  - a producer's gap across a handoff with the ownership feed and without (ownership-feed.ts);
//  - placing 100,000 streams with placements and planning a rebalance of them (placement-plan.ts).
// Run: npm run build && node dist/bench/stream-transfer/run.js   (BENCH_QUICK=1 for a short run)
// Prints a human table, then one JSON line per benchmark: {"bench":"stream-transfer", ...}.
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import { DiskWal } from '@baton/stream-transfer/internal/disk-wal.js';
import { NotOwnerError } from '@baton/stream-transfer/internal/errors.js';
import { HandoffWatcher } from '@baton/stream-transfer/internal/handoff-watcher.js';
import { MemoryWalDisk } from '@baton/stream-transfer/internal/memory-wal-disk.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { StreamNode } from '@baton/stream-transfer/internal/stream-node.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';
import { describeFailover, failoverAfterDeath, FAILOVER_SETUPS } from './failover.js';
import { describeProcessFailover, failoverOfKilledProcess, PROCESS_FAILOVER_SETUPS } from './failover-processes.js';
import { describeHandoffGaps, handoffWithAndWithoutFeed } from './ownership-feed.js';
import { describePlacementPlan, planPlacement } from './placement-plan.js';

const QUICK = process.env.BENCH_QUICK === '1';
const TRANSFERS = QUICK ? 20 : 100;
const DRAIN_STREAMS = QUICK ? 200 : 1_000;
const THROUGHPUT_MS = QUICK ? 1_000 : 3_000;

class Bench {
  readonly clock = new SystemClock();
  readonly consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  readonly store = new MemoryObjectStore();
  readonly nodes = new Map<string, StreamNode>();
  private readonly watchers: HandoffWatcher[] = [];

  async addNode(id: string, slots: number): Promise<StreamNode> {
    await this.must({ type: 'register-node', node: id, address: `mem://${id}`, slots });
    const node = new StreamNode(this.consensus, this.store, new DiskWal(new MemoryWalDisk()), this.clock, createSilentLogger(), { node: id });
    await node.start();
    const watcher = new HandoffWatcher(node);
    watcher.start();
    this.watchers.push(watcher);
    this.nodes.set(id, node);
    return node;
  }

  async must(command: StreamCommand): Promise<StreamResult> {
    const receipt = await this.consensus.propose(command);
    if (!receipt.result.ok) throw new Error(`${command.type} refused: ${receipt.result.message}`);
    return receipt.result;
  }

  get state(): StreamMetadata {
    return this.consensus.view().state;
  }

  async until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
    const deadline = performance.now() + ms;
    while (!condition()) {
      if (performance.now() > deadline) throw new Error(`benchmark stalled waiting for ${what}`);
      await this.clock.sleep(1);
    }
  }

  serving(stream: string): boolean {
    const record = this.state.stream(stream)!;
    const session = this.nodes.get(record.owner)?.session(stream);
    return !this.state.transfer(stream) && record.state === 'open' && session?.epoch === record.epoch && session.writable;
  }

  async stop(): Promise<void> {
    for (const w of this.watchers) w.stop();
    for (const node of this.nodes.values()) await node.stop();
  }
}

/**
 * A writer that follows owner hints and records when each append was acknowledged. With memory
 * plugins an append completes in microtasks alone; the writer yields to the event loop between
 * appends, as a network client would, or it would starve every timer in the process.
 */
async function writer(bench: Bench, stream: string, batch: string[], acks: number[], running: () => boolean): Promise<void> {
  let node = bench.state.stream(stream)!.owner;
  while (running()) {
    try {
      await bench.nodes.get(node)!.append(stream, batch);
      acks.push(performance.now());
    } catch (error) {
      if (error instanceof NotOwnerError) node = error.owner;
      else throw error;
    }
    await yieldToEventLoop();
  }
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (n: number) => Math.round(n * 100) / 100;

async function unavailabilityWindow(kind: 'quiet' | 'busy') {
  const bench = new Bench();
  await bench.addNode('a', 10);
  await bench.addNode('b', 10);
  await bench.must({ type: 'create-stream', stream: 's', node: 'a' });
  await bench.until(() => bench.serving('s'), 'the stream to open');
  const writers = kind === 'quiet' ? 1 : 8;
  const batch = kind === 'quiet' ? ['q'] : Array.from({ length: 100 }, () => 'x'.repeat(1024));
  const acks: number[][] = Array.from({ length: writers }, () => []);
  let running = true;
  const loops = acks.map((a) => writer(bench, 's', batch, a, () => running));
  const windows: number[] = [];
  await bench.clock.sleep(50);
  // A few transfers first, not measured: JIT warm-up would otherwise be the p99.
  const WARMUP = 5;
  for (let i = 0; i < TRANSFERS + WARMUP; i++) {
    const owner = bench.state.stream('s')!.owner;
    const target = owner === 'a' ? 'b' : 'a';
    const epoch = bench.state.stream('s')!.epoch;
    const started = performance.now();
    await bench.must({ type: 'transfer', stream: 's', target });
    await bench.until(() => bench.serving('s') && bench.state.stream('s')!.epoch > epoch, 'the handoff');
    // Wait until every writer was acknowledged at the new owner, then measure the longest gap.
    const settled = performance.now();
    await bench.until(() => acks.every((a) => a.length > 0 && a[a.length - 1] > settled), 'writers to resume');
    const all = acks.flat().filter((t) => t >= started - 1_000).sort((x, y) => x - y);
    let last = all.filter((t) => t < started).pop() ?? started;
    let longest = 0;
    for (const t of all) {
      if (t < started) continue;
      longest = Math.max(longest, t - last);
      last = t;
      if (t > settled) break;
    }
    if (i >= WARMUP) windows.push(longest);
    if (process.env.BENCH_DEBUG) console.error(kind, i, round(longest));
    await bench.clock.sleep(10);
  }
  running = false;
  await Promise.all(loops);
  await bench.stop();
  windows.sort((x, y) => x - y);
  return {
    bench: 'stream-transfer',
    measure: 'unavailability_window',
    stream: kind,
    writers,
    recordsPerAppend: batch.length,
    transfers: TRANSFERS,
    p50Ms: round(percentile(windows, 0.5)),
    p99Ms: round(percentile(windows, 0.99)),
    maxMs: round(windows[windows.length - 1]),
  };
}

async function drain() {
  const bench = new Bench();
  await bench.addNode('a', DRAIN_STREAMS);
  await bench.addNode('b', DRAIN_STREAMS);
  await bench.addNode('c', DRAIN_STREAMS);
  for (let i = 0; i < DRAIN_STREAMS; i++) await bench.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  await bench.until(() => bench.nodes.get('a')!.localStreams().length === DRAIN_STREAMS, 'every stream to open', 60_000);
  const inFlight = 64;
  const started = performance.now();
  await bench.must({ type: 'drain', node: 'a', maxInFlight: inFlight });
  await bench.until(
    () => bench.state.transferCount === 0 && [...bench.state.streams()].every((s) => s.owner !== 'a'),
    'the drain',
    120_000,
  );
  const drainedMs = performance.now() - started;
  await bench.until(() => [...bench.state.streams()].map((s) => s.id).every((s) => bench.serving(s)), 'targets to open', 60_000);
  const openMs = performance.now() - started;
  await bench.stop();
  return {
    bench: 'stream-transfer',
    measure: 'drain',
    streams: DRAIN_STREAMS,
    maxInFlight: inFlight,
    drainedMs: round(drainedMs),
    allOpenOnTargetsMs: round(openMs),
  };
}

async function throughput() {
  const bench = new Bench();
  await bench.addNode('a', 100);
  const streams = 8;
  for (let i = 0; i < streams; i++) await bench.must({ type: 'create-stream', stream: `t${i}`, node: 'a' });
  await bench.until(() => Array.from({ length: streams }, (_, i) => `t${i}`).every((s) => bench.serving(s)), 'streams to open');
  const record = 'y'.repeat(1024);
  const batch = Array.from({ length: 100 }, () => record);
  let appends = 0;
  let running = true;
  const writers = 4;
  const started = performance.now();
  const loops = Array.from({ length: streams * writers }, async (_, i) => {
    const node = bench.nodes.get('a')!;
    while (running) {
      await node.append(`t${i % streams}`, batch);
      appends += 1;
      await yieldToEventLoop();
    }
  });
  await bench.clock.sleep(THROUGHPUT_MS);
  running = false;
  await Promise.all(loops);
  const seconds = (performance.now() - started) / 1000;
  await bench.stop();
  const records = appends * batch.length;
  return {
    bench: 'stream-transfer',
    measure: 'throughput',
    node: 'a',
    streams,
    concurrentWriters: streams * writers,
    recordsPerAppend: batch.length,
    recordBytes: record.length,
    appendsPerSec: round(appends / seconds),
    recordsPerSec: round(records / seconds),
    mbPerSec: round((records * record.length) / seconds / 1e6),
  };
}

const quiet = await unavailabilityWindow('quiet');
const busy = await unavailabilityWindow('busy');
const drained = await drain();
const rate = await throughput();
const failovers = [];
for (const [setup, options] of FAILOVER_SETUPS) failovers.push({ ...(await failoverAfterDeath(options)), setup });
const processFailovers = [];
for (const [setup, options] of PROCESS_FAILOVER_SETUPS) processFailovers.push({ ...(await failoverOfKilledProcess(options)), setup });
const feedGaps = await handoffWithAndWithoutFeed();
const placementPlan = planPlacement();

console.log('stream-transfer benchmark (memory plugins, one process)');
console.log('');
console.log('unavailability window per transfer   p50 ms    p99 ms    max ms');
for (const w of [quiet, busy]) {
  console.log(`  ${w.stream.padEnd(6)} (${String(w.writers).padStart(1)} writer(s) x ${String(w.recordsPerAppend).padStart(3)} rec)    ${String(w.p50Ms).padStart(7)}   ${String(w.p99Ms).padStart(7)}   ${String(w.maxMs).padStart(7)}`);
}
console.log('');
console.log(`drain of ${drained.streams} streams (in flight ${drained.maxInFlight}): owns nothing after ${drained.drainedMs} ms; all open on targets after ${drained.allOpenOnTargetsMs} ms`);
console.log(`throughput of one node: ${rate.appendsPerSec} appends/s, ${rate.recordsPerSec} records/s, ${rate.mbPerSec} MB/s (${rate.concurrentWriters} writers, ${rate.recordsPerAppend} x ${rate.recordBytes} B per append)`);
for (const failover of failovers) console.log(`${failover.setup}: ${describeFailover(failover)}`);
for (const failover of processFailovers) console.log(`${failover.setup}: ${describeProcessFailover(failover)}`);
console.log(describeHandoffGaps(feedGaps));
console.log(describePlacementPlan(placementPlan));
console.log('');
for (const line of [quiet, busy, drained, rate, ...failovers, ...processFailovers, feedGaps, placementPlan]) console.log(JSON.stringify(line));
