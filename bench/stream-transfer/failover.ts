// Failover benchmark, memory plugins in one process (LocalConsensus, MemoryObjectStore, memory
// WAL), real time: a node owning 1,000 streams dies (its process stops: no close, no lease
// renewal); every other node renews its lease and the metadata leader observes, with the
// default thresholds (Dead after 3 s of silence, automatic failover 1 s later) and then with the
// adaptive preset (phi accrual over renewals every 200 ms, failover at once). Measured per
// stream: the time from the death to the first append acknowledged elsewhere, p50/p99 over the
// dead node's streams, with detection included and excluded (from the failover's commit on).
// Run: npm run build && node dist/bench/stream-transfer/failover.js   (BENCH_QUICK=1: 200 streams)
// Also run by bench/stream-transfer/run.js. Prints a human table, then one JSON line.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import { DiskWal } from '@baton/stream-transfer/internal/disk-wal.js';
import { NotOwnerError } from '@baton/stream-transfer/internal/errors.js';
import { HandoffWatcher } from '@baton/stream-transfer/internal/handoff-watcher.js';
import { LivenessObserver } from '@baton/stream-transfer/internal/liveness-observer.js';
import { MemoryWalDisk } from '@baton/stream-transfer/internal/memory-wal-disk.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { NodeLease } from '@baton/stream-transfer/internal/node-lease.js';
import {
  ADAPTIVE_NODE_LIVENESS_OPTIONS,
  DEFAULT_NODE_LIVENESS_OPTIONS,
  earliestDeadMs,
  type NodeLivenessOptions,
} from '@baton/stream-transfer/internal/node-liveness.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { StreamNode } from '@baton/stream-transfer/internal/stream-node.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';

const QUICK = process.env.BENCH_QUICK === '1';
const STREAMS = QUICK ? 200 : 1_000;
/** How often a stream's client tries again while its stream has no live owner. */
const RETRY_MS = 20;

interface Member {
  node: StreamNode;
  watcher: HandoffWatcher;
  lease: NodeLease;
  observer?: LivenessObserver;
}

export async function failoverAfterDeath(options: NodeLivenessOptions = DEFAULT_NODE_LIVENESS_OPTIONS) {
  const clock = new SystemClock();
  const logger = createSilentLogger();
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine(), { self: 'a' });
  const store = new MemoryObjectStore();
  const must = async (command: StreamCommand) => {
    const receipt = await consensus.propose(command);
    if (!receipt.result.ok) throw new Error(`${command.type} refused: ${receipt.result.message}`);
  };
  const members = new Map<string, Member>();
  for (const id of ['a', 'b', 'dead']) {
    await must({ type: 'register-node', node: id, address: `mem://${id}`, slots: STREAMS });
    const node = new StreamNode(consensus, store, new DiskWal(new MemoryWalDisk()), clock, logger, { node: id });
    await node.start();
    const watcher = new HandoffWatcher(node);
    watcher.start();
    const lease = new NodeLease({ self: id, boot: `${id}-1`, consensus, store, clock, logger, renewEveryMs: options.renewEveryMs, deadAfterMs: earliestDeadMs(options) });
    node.acknowledgeable = () => lease.acknowledgeable();
    lease.start();
    // One metadata leader observes: a.
    const observer = id === 'a' ? new LivenessObserver({ self: id, consensus, store, clock, logger, options }) : undefined;
    observer?.start();
    members.set(id, { node, watcher, lease, observer });
  }
  const streams = Array.from({ length: STREAMS }, (_, i) => `f${i}`);
  for (const stream of streams) await must({ type: 'create-stream', stream, node: 'dead' });
  const dead = members.get('dead')!;
  await until(() => streams.every((s) => dead.node.session(s)?.writable), 'streams to open on the doomed node');
  for (const stream of streams) await dead.node.append(stream, ['before']);
  // The phi detector judges by the gaps it has seen: let it see a few seconds of renewals first,
  // as it would have of any node that ran for a while before dying.
  await clock.sleep(options.renewEveryMs * 15);

  let failoverAt: number | undefined;
  const unwatch = consensus.watch((_view, entry) => {
    if (entry.command.type === 'failover' && entry.result.ok && failoverAt === undefined) failoverAt = performance.now();
  });
  // The process dies: no more renewals, no close, nothing flushed, nothing answered.
  dead.watcher.stop();
  dead.lease.stop();
  dead.node.crash();
  const diedAt = performance.now();
  const served = await Promise.all(streams.map((stream) => firstAckElsewhere(stream, members, clock)));
  unwatch();
  const total = performance.now() - diedAt;
  for (const [id, m] of members) {
    m.watcher.stop();
    m.lease.stop();
    m.observer?.stop();
    if (id !== 'dead') await m.node.stop();
  }
  if (failoverAt === undefined) throw new Error('no failover was committed');
  const sinceDeath = served.map((at) => at - diedAt).sort((x, y) => x - y);
  const sinceFailover = served.map((at) => at - failoverAt!).sort((x, y) => x - y);
  return {
    bench: 'stream-transfer',
    measure: 'failover-after-death',
    streams: STREAMS,
    thresholds: options,
    detectionMs: round(failoverAt - diedAt),
    sinceDeathP50Ms: round(percentile(sinceDeath, 0.5)),
    sinceDeathP99Ms: round(percentile(sinceDeath, 0.99)),
    sinceDeathMaxMs: round(sinceDeath[sinceDeath.length - 1]),
    detectionExcludedP50Ms: round(percentile(sinceFailover, 0.5)),
    detectionExcludedP99Ms: round(percentile(sinceFailover, 0.99)),
    allServingAfterMs: round(total),
  };
}

/** A client of one stream: asks a live node, follows the hint, and notes its first acknowledged append. */
async function firstAckElsewhere(stream: string, members: Map<string, Member>, clock: SystemClock): Promise<number> {
  let at = 'a';
  for (;;) {
    const node = members.get(at)!.node;
    try {
      await node.append(stream, ['after']);
      return performance.now();
    } catch (error) {
      // Still routed to the dead node: wait for the failover; any other refusal: retry.
      at = error instanceof NotOwnerError && error.owner !== 'dead' ? error.owner : 'a';
      if (!(error instanceof NotOwnerError) || error.owner === 'dead') await clock.sleep(RETRY_MS);
    }
  }
}

async function until(condition: () => boolean, what: string, ms = 60_000): Promise<void> {
  const clock = new SystemClock();
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`benchmark stalled waiting for ${what}`);
    await clock.sleep(5);
  }
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export function round(n: number): number {
  return Math.round(n * 10) / 10;
}

export function describeFailover(r: Awaited<ReturnType<typeof failoverAfterDeath>>): string {
  const t = r.thresholds;
  return [
    `failover of a dead node owning ${r.streams} streams (${detectorWords(t)}, automatic failover ${t.autoFailoverAfterMs} ms later)`,
    '                                          p50 ms    p99 ms',
    `  death -> serving elsewhere            ${String(r.sinceDeathP50Ms).padStart(8)}  ${String(r.sinceDeathP99Ms).padStart(8)}`,
    `  failover commit -> serving elsewhere  ${String(r.detectionExcludedP50Ms).padStart(8)}  ${String(r.detectionExcludedP99Ms).padStart(8)}`,
    `  detection (death -> failover commit): ${r.detectionMs} ms; every stream serving after ${r.allServingAfterMs} ms`,
  ].join('\n');
}

function detectorWords(t: NodeLivenessOptions): string {
  const d = t.detector;
  return d?.kind === 'phi'
    ? `phi accrual: Dead at phi ${d.threshold}, from ${d.minDeadAfterMs} ms to ${t.deadAfterMs} ms of silence, renewals every ${t.renewEveryMs} ms`
    : `Dead after ${t.deadAfterMs} ms, renewals every ${t.renewEveryMs} ms`;
}

/** The default fixed thresholds and the adaptive preset, one after the other in one process. */
export const FAILOVER_SETUPS: Array<[string, NodeLivenessOptions]> = [
  ['fixed (default)', DEFAULT_NODE_LIVENESS_OPTIONS],
  ['phi accrual (ADAPTIVE_NODE_LIVENESS_OPTIONS)', ADAPTIVE_NODE_LIVENESS_OPTIONS],
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log('stream-transfer failover benchmark (memory plugins, one process)');
  const lines: string[] = [];
  for (const [name, options] of FAILOVER_SETUPS) {
    const result = await failoverAfterDeath(options);
    console.log('');
    console.log(`${name}: ${describeFailover(result)}`);
    lines.push(JSON.stringify({ ...result, setup: name }));
  }
  console.log('');
  for (const line of lines) console.log(line);
}
