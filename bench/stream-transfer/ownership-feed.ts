// Ownership feed benchmark: what a producer sees across a handoff with the feed and without it,
// side by side in one run. Two stream node hosts in one process (one metadata consensus, memory
// object store and WALs) serve real HTTP; producers append one small record at a time through
// @baton/client, each to its own stream. Half of them watch their stream's ownership feed and
// share its routes with their client (appends go to the owner-to-be as soon as a transfer is
// pending); the other half learn the move from the source's 409 not-owner answer. Every round
// moves all the streams of both halves at once to the other node. Measured per stream and
// round: the gap between the producer's last append acknowledged at the old epoch and its first
// at the new one; p50/p99 per half, and the ratio feed / no feed.
// Run: npm run build && node dist/bench/stream-transfer/ownership-feed.js   (BENCH_QUICK=1: 3 rounds)
// Prints a human table, then one JSON line.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { streamNodeClient } from '@baton/client/internal/clients.js';
import { OwnerRoutes } from '@baton/client/internal/owner-routes.js';
import { watchStreamOwnership, type OwnershipWatch, type StreamOwnership } from '@baton/client/internal/ownership-watch.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { sharedConsensus } from '@baton/testing/internal/fakes/shared-consensus.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 3 : 10;
const STREAMS_PER_HALF = QUICK ? 10 : 25;
const TOKEN = 'bench-admin';

interface Ack {
  at: number;
  epoch: number;
}

type Half = 'feed' | 'no feed';

class Producer {
  readonly acks: Ack[] = [];
  private stopped = false;
  private readonly running: Promise<void>;
  private readonly client;

  constructor(
    readonly stream: string,
    baseUrl: string,
    routes: OwnerRoutes,
  ) {
    this.client = streamNodeClient({ baseUrl, token: TOKEN, routes });
    this.running = this.produce();
  }

  private async produce(): Promise<void> {
    const clock = new SystemClock();
    while (!this.stopped) {
      const answer = await this.client
        .POST('/v1/streams/{stream}/records', { params: { path: { stream: this.stream } }, body: { records: [{ body: 'x' }] } })
        .catch(() => undefined);
      if (answer?.data) this.acks.push({ at: performance.now(), epoch: answer.data.epoch });
      else await clock.sleep(5);
    }
  }

  /** Whether an append at `epoch` was acknowledged. */
  ackedAt(epoch: number): boolean {
    return this.acks.some((a) => a.epoch === epoch);
  }

  /** First acknowledged at `epoch` minus last acknowledged before it. */
  gapInto(epoch: number): number {
    const before = this.acks.filter((a) => a.epoch < epoch).at(-1)!;
    const after = this.acks.find((a) => a.epoch === epoch)!;
    return after.at - before.at;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}

export async function handoffWithAndWithoutFeed() {
  const inner = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  const shared = sharedConsensus(inner);
  const config = (self: string) => ({
    node: { self, http: { port: 0 }, wal: { kind: 'memory' }, tokens: [{ token: TOKEN, principal: 'bench', scopes: ['admin', 'stream:append', 'stream:read'] }] },
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: { level: 'silent' },
  });
  const first = streamNodeHostBuilder(config('n1')).value(METADATA_CONSENSUS, shared).build();
  await first.start();
  const second = streamNodeHostBuilder(config('n2')).value(METADATA_CONSENSUS, shared).value(OBJECT_STORE, first.get(OBJECT_STORE)).build();
  await second.start();
  const nodes = { n1: first.get(STREAM_NODE), n2: second.get(STREAM_NODE) };
  const admin = streamNodeClient({ baseUrl: nodes.n1.url, token: TOKEN });
  await until(async () => ((await admin.GET('/v1/admin/nodes')).data?.nodes.length ?? 0) === 2, 'both nodes to register');

  const halves: Record<Half, Producer[]> = { feed: [], 'no feed': [] };
  const watches: OwnershipWatch<StreamOwnership>[] = [];
  for (const half of ['feed', 'no feed'] as const) {
    for (let i = 0; i < STREAMS_PER_HALF; i++) {
      const stream = `${half === 'feed' ? 'fed' : 'plain'}-${i}`;
      const created = await admin.POST('/v1/admin/streams', { body: { stream, node: 'n1' } });
      if (!created.data) throw new Error(`create ${stream} answered ${created.response.status}`);
      const routes = new OwnerRoutes();
      if (half === 'feed') {
        const watch = watchStreamOwnership(stream, { nodes: [nodes.n2.url, nodes.n1.url], token: TOKEN, routes });
        await watch.until(() => true);
        watches.push(watch);
      }
      halves[half].push(new Producer(stream, nodes.n1.url, routes));
    }
  }
  const everyone = [...halves.feed, ...halves['no feed']];
  await until(() => everyone.every((p) => p.ackedAt(1)), 'every producer to append at epoch 1');

  const gaps: Record<Half, number[]> = { feed: [], 'no feed': [] };
  for (let round = 0; round < ROUNDS; round++) {
    const epoch = round + 2;
    const target = round % 2 === 0 ? 'n2' : 'n1';
    // Every producer has appended a while at the current epoch: the gap starts from a steady state.
    await until(() => everyone.every((p) => p.acks.filter((a) => a.epoch === epoch - 1).length >= 20), `round ${round} to settle`);
    await Promise.all(
      everyone.map(async (p) => {
        const moved = await admin.POST('/v1/admin/transfers', { body: { stream: p.stream, target } });
        if (moved.response.status !== 202) throw new Error(`transfer of ${p.stream} answered ${moved.response.status}`);
      }),
    );
    await until(() => everyone.every((p) => p.ackedAt(epoch)), `round ${round}: every producer to append at epoch ${epoch}`);
    for (const half of ['feed', 'no feed'] as const) for (const p of halves[half]) gaps[half].push(p.gapInto(epoch));
  }
  await Promise.all(everyone.map((p) => p.stop()));
  await Promise.all(watches.map((w) => w.close()));
  await second.stop();
  await first.stop();

  const summary = (half: Half) => {
    const sorted = [...gaps[half]].sort((x, y) => x - y);
    return { p50Ms: round1(percentile(sorted, 0.5)), p99Ms: round1(percentile(sorted, 0.99)), maxMs: round1(sorted.at(-1)!) };
  };
  const feed = summary('feed');
  const plain = summary('no feed');
  return {
    bench: 'stream-transfer',
    measure: 'handoff-gap-with-ownership-feed',
    rounds: ROUNDS,
    streamsPerHalf: STREAMS_PER_HALF,
    samplesPerHalf: gaps.feed.length,
    feed,
    noFeed: plain,
    ratioP50: round2(feed.p50Ms / plain.p50Ms),
    ratioP99: round2(feed.p99Ms / plain.p99Ms),
  };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const clock = new SystemClock();
  const deadline = performance.now() + ms;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`benchmark stalled waiting for ${what}`);
    await clock.sleep(5);
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

export function describeHandoffGaps(r: Awaited<ReturnType<typeof handoffWithAndWithoutFeed>>): string {
  const row = (name: string, s: { p50Ms: number; p99Ms: number; maxMs: number }) =>
    `  ${name.padEnd(36)}${String(s.p50Ms).padStart(8)}  ${String(s.p99Ms).padStart(8)}  ${String(s.maxMs).padStart(8)}`;
  return [
    `producer's gap across a handoff (last ack at the old epoch -> first at the new), ${r.samplesPerHalf} handoffs per half`,
    '                                         p50 ms    p99 ms    max ms',
    row('with the ownership feed', r.feed),
    row('without (409 not-owner, then follow)', r.noFeed),
    `  feed / no feed: p50 ${r.ratioP50}x, p99 ${r.ratioP99}x`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log('stream-transfer ownership feed benchmark (two hosts over HTTP, one process)');
  const result = await handoffWithAndWithoutFeed();
  console.log('');
  console.log(describeHandoffGaps(result));
  console.log('');
  console.log(JSON.stringify(result));
}
