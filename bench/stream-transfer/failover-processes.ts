// Failover benchmark on real processes: three stream node processes as `baton up` runs them
// (voters of one Raft over HTTP, WAL and Raft log on files, one shared file object store), 1,000
// streams on a node that is not the metadata leader. That node is killed (SIGKILL). Every
// stream has a client that watches its ownership feed on the two other nodes and, once the feed
// names a new owner, appends there. Measured per stream: the time from the kill to the first
// append acknowledged elsewhere (p50/p99/max), and to the first ownership event naming another
// owner (the detection and the failover's commit). Run once with the default fixed thresholds
// and once with the adaptive preset (phi accrual, renewals every 200 ms, failover at once).
// Run: npm run build && node --conditions=baton-internal dist/bench/stream-transfer/failover-processes.js
// (BENCH_QUICK=1: 200 streams). Prints a human table, then one JSON line per setup.
import { mkdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { StreamClient, watchStreamOwnership, type OwnershipWatch, type StreamOwnership } from '@baton/client';
import {
  ADAPTIVE_NODE_LIVENESS_OPTIONS,
  DEFAULT_NODE_LIVENESS_OPTIONS,
  type NodeLivenessOptions,
} from '@baton/stream-transfer/internal/node-liveness.js';
import { RUNS_ROOT } from '../../test/nemesis/stream/cluster-for-test.js';
import { startStreamCluster } from '../../test/nemesis/stream/stream-cluster.js';
import { percentile, round } from './failover.js';

const QUICK = process.env.BENCH_QUICK === '1';
const STREAMS = QUICK ? 200 : 1_000;
/** Creates and first appends in flight at once while setting up. */
const SETUP_CONCURRENCY = 32;
/** How long the cluster runs before the kill, so the phi detector has seen renewals as it would of any node that ran a while. */
const RUN_BEFORE_KILL_MS = 5_000;
const DEADLINE_MS = 120_000;

export async function failoverOfKilledProcess(liveness: NodeLivenessOptions) {
  // Members run under uids of their own (as the nemesis runs): a directory they can enter.
  const dir = join(RUNS_ROOT, `bench-failover-${process.pid}-${liveness.renewEveryMs}`);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const cluster = await startStreamCluster({ seed: 1, members: 3, dir }, 'raft', { liveness, slots: STREAMS * 2 });
  const watches: OwnershipWatch<StreamOwnership>[] = [];
  try {
    const leader = await until(() => cluster.leader(), 'a metadata leader');
    const victim = Object.keys(cluster.urls).find((id) => id !== leader)!;
    const survivors = Object.entries(cluster.urls).filter(([id]) => id !== victim).map(([, url]) => url);
    const ops = new StreamClient({ nodes: survivors, token: cluster.token });
    const streams = Array.from({ length: STREAMS }, (_, i) => `f${i}`);
    await inBatches(streams, (stream) => ops.createStream(stream, victim));
    const onVictim = new StreamClient({ nodes: [cluster.urls[victim]!], token: cluster.token });
    await inBatches(streams, (stream) => onVictim.append(stream, ['before']));
    for (const stream of streams) watches.push(watchStreamOwnership(stream, { nodes: survivors, token: cluster.token }));
    await Promise.all(watches.map((watch) => watch.until((event) => event.owner === victim)));
    await new Promise((resolve) => setTimeout(resolve, RUN_BEFORE_KILL_MS));

    const refusals = new Map<string, number>();
    const load = loadavg()[0]!;
    const killedAt = performance.now();
    await cluster.members.find((member) => member.id === victim)!.process.kill();
    const outcomes = await Promise.all(
      streams.map(async (stream, i) => {
        const moved = await watches[i]!.until((event) => event.owner !== null && event.owner !== victim);
        const seenAt = performance.now();
        const client = new StreamClient({ nodes: [cluster.urls[moved.owner!]!, ...survivors], token: cluster.token, fetch: counting(refusals) });
        await client.append(stream, ['after']);
        return { seenAt, servedAt: performance.now() };
      }),
    );
    const sinceKill = outcomes.map((o) => o.servedAt - killedAt).sort((a, b) => a - b);
    const seen = outcomes.map((o) => o.seenAt - killedAt).sort((a, b) => a - b);
    return {
      bench: 'stream-transfer',
      measure: 'failover-of-killed-process',
      processes: 3,
      streams: STREAMS,
      thresholds: liveness,
      loadAverageAtKill: Math.round(load * 100) / 100,
      firstMoveSeenMs: round(seen[0]!),
      moveSeenP99Ms: round(percentile(seen, 0.99)),
      sinceKillP50Ms: round(percentile(sinceKill, 0.5)),
      sinceKillP99Ms: round(percentile(sinceKill, 0.99)),
      sinceKillMaxMs: round(sinceKill[sinceKill.length - 1]!),
      /** The refusals the clients sat through on the way (status and problem type: a count each). */
      refusals: Object.fromEntries(refusals),
    };
  } finally {
    await Promise.all(watches.map((watch) => watch.close()));
    await cluster.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A fetch that counts the refusals it passes on, by status and problem type. */
function counting(refusals: Map<string, number>): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await fetch(request);
    if (!response.ok) {
      const type = ((await response.clone().json().catch(() => ({}))) as { type?: string }).type ?? 'no problem type';
      const key = `${response.status} ${type.replace('urn:baton:problem:', '')}`;
      refusals.set(key, (refusals.get(key) ?? 0) + 1);
    }
    return response;
  };
}

/** Runs `fn` over `items`, SETUP_CONCURRENCY at a time. */
async function inBatches<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = performance.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`benchmark stalled waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function describeProcessFailover(r: Awaited<ReturnType<typeof failoverOfKilledProcess>>): string {
  return [
    `kill -9 of a node process owning ${r.streams} streams (3 processes, load average ${r.loadAverageAtKill} at the kill)`,
    '                                      p50 ms    p99 ms    max ms',
    `  kill -> serving elsewhere         ${String(r.sinceKillP50Ms).padStart(8)}  ${String(r.sinceKillP99Ms).padStart(8)}  ${String(r.sinceKillMaxMs).padStart(8)}`,
    `  kill -> the feed names the new owner: first ${r.firstMoveSeenMs} ms, p99 ${r.moveSeenP99Ms} ms`,
    `  refusals sat through: ${Object.entries(r.refusals).map(([what, n]) => `${n} x ${what}`).join(', ') || 'none'}`,
  ].join('\n');
}

export const PROCESS_FAILOVER_SETUPS: Array<[string, NodeLivenessOptions]> = [
  ['fixed (default)', DEFAULT_NODE_LIVENESS_OPTIONS],
  ['phi accrual (ADAPTIVE_NODE_LIVENESS_OPTIONS)', ADAPTIVE_NODE_LIVENESS_OPTIONS],
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log('stream-transfer failover benchmark (real node processes)');
  const lines: string[] = [];
  for (const [name, options] of PROCESS_FAILOVER_SETUPS) {
    const result = await failoverOfKilledProcess(options);
    console.log('');
    console.log(`${name}: ${describeProcessFailover(result)}`);
    lines.push(JSON.stringify({ ...result, setup: name }));
  }
  console.log('');
  for (const line of lines) console.log(line);
}
