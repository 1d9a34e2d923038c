// Authority-transfer benchmark: (1) cancel latency while the probe is blocked on an unresponsive
// target, (2) commit latency once the target reached the barrier, on a 3-member Raft cluster,
// (3) many transfers on that cluster: transfers/s, heap before/after, registry and pending sizes,
// with the audit stores out of process (one Redis per member, spawned) when redis-server exists.
// Run: npm run build && node --expose-gc dist/bench/authority-transfer/run.js
//   BENCH_TRANSFERS=500000 for the full run (default 20,000), BENCH_QUICK=1 for a smoke run.
// (4) the freeze window with a writer racing every transfer, on three in-process members each
// with its own feed, fence and engine (freeze-window.ts), with that run's commit latency and
// transfers/s: BENCH_FREEZE_TRANSFERS (default 500).
// Prints a human table, then one JSON line per benchmark: {"bench":"authority-transfer", ...}
// and {"bench":"authority-transfer-freeze", ...}.
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { AuditProjection } from '@baton/authority-transfer/internal/audit-projection.js';
import { ChangeFeed } from '@baton/authority-transfer/internal/change-feed.js';
import { FreezeAcknowledger } from '@baton/authority-transfer/internal/freeze-acknowledger.js';
import type { FrontierProbe } from '@baton/authority-transfer/internal/frontier-probe.js';
import type { OwnershipCommand, OwnershipResult, OwnershipState } from '@baton/authority-transfer/internal/ownership.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { TransferDriver as PlannedTransferEngine } from '@baton/authority-transfer/internal/transfer-driver.js';
import type { AuditStore } from '@baton/contracts/internal/audit-store.js';
import type { Clock } from '@baton/contracts/internal/clock.js';
import type { MetadataConsensus } from '@baton/contracts/internal/metadata-consensus.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { SimNetwork } from '@baton/testing/internal/sim/network.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { benchFreezeWindow } from './freeze-window.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import { redisAuditStoreOptions } from '@baton/plugin-redis/internal/options.js';
import { RedisAuditStore } from '@baton/plugin-redis/internal/redis-audit-store.js';

type Ownership = MetadataConsensus<OwnershipState, OwnershipCommand, OwnershipResult>;

const QUICK = process.env.BENCH_QUICK === '1';
const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? (QUICK ? 2_000 : 20_000));
const CANCELS = QUICK ? 200 : 2_000;
const COMMITS = QUICK ? 200 : 2_000;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 256);
const FREEZE_TRANSFERS = Number(process.env.BENCH_FREEZE_TRANSFERS ?? (QUICK ? 50 : 500));
const MEMBERS = ['east-1', 'west-1', 'north-1'];
const clock = new SystemClock();
const log = createSilentLogger();

const caughtUp: FrontierProbe = { probe: async () => ({ serial: Number.MAX_SAFE_INTEGER, replica: 'caught-up' }) };

/** A target that never answers: the probe runs into its own ten-second timeout (or the cancel). */
const unresponsive = (c: Clock): FrontierProbe => ({
  probe: async (_t, _o, options) => {
    await c.sleep(options.timeoutMs, options.signal);
    return undefined;
  },
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return { n: sorted.length, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted[sorted.length - 1]) };
}

async function engineFor(consensus: Ownership, audit: AuditStore, probe: FrontierProbe) {
  const projection = new AuditProjection(consensus, audit, clock, log);
  projection.start();
  const feed = new ChangeFeed(consensus.leadership().self, { mintIncarnation: () => 'bench' });
  await feed.open();
  const engine = new PlannedTransferEngine({ consensus, audit, projection, probe, feed, clock, log });
  // The barrier is this member's own feed (OwnFeedPosition): it records its final serial itself.
  const freezes = new FreezeAcknowledger(consensus, feed, 'bench', clock, log);
  freezes.start();
  return { engine, projection, feed, freezes };
}

async function benchCancel() {
  const consensus = new LocalConsensus(new OwnershipStateMachine(), { self: 'east-1', clock });
  const { engine, projection, freezes } = await engineFor(consensus, new MemoryAuditStore(), unresponsive(clock));
  await consensus.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  const answer: number[] = [];
  const ended: number[] = [];
  for (let i = 0; i < CANCELS; i++) {
    const run = engine.start({ id: `c${i}`, authority: 'proj', source: 'east', target: 'west', actor: 'bench', reason: 'bench' });
    const settled: Promise<number> = run.then(
      () => Number.NaN,
      () => performance.now(),
    );
    await new Promise((resolve) => setImmediate(resolve)); // the probe is now blocked
    const t0 = performance.now();
    await engine.cancel('proj');
    answer.push(performance.now() - t0);
    ended.push((await settled) - t0);
  }
  projection.stop();
  freezes.stop();
  return { cancelAnswer: summary(answer), runEnded: summary(ended) };
}

async function raftCluster(audits: AuditStore[]) {
  const network = new SimNetwork(clock, new SeededRng(7).fork('network'), { minDelayMs: 0, maxDelayMs: 0 });
  const members = MEMBERS.map(
    (self, i) =>
      new RaftConsensus<OwnershipState, OwnershipCommand, OwnershipResult>({
        self,
        voters: MEMBERS,
        machine: new OwnershipStateMachine(),
        storage: new MemoryRaftStorage(),
        transport: network.transport(self),
        clock,
        rng: new SeededRng(100 + i),
        logger: log,
        snapshotInterval: 5_000,
        snapshotRetain: 500,
      }),
  );
  for (const m of members) await m.start();
  const deadline = performance.now() + 10_000;
  while (!members.some((m) => m.leadership().isLeader)) {
    if (performance.now() > deadline) throw new Error('no Raft leader within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const leader = members.find((m) => m.leadership().isLeader)!;
  const engines = await Promise.all(members.map((m, i) => engineFor(m, audits[i], caughtUp)));
  return { members, leader, engine: engines[members.indexOf(leader)].engine, engines };
}

async function auditStores(): Promise<{ stores: AuditStore[]; kind: string; close: () => Promise<void> }> {
  let hasRedis = true;
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    hasRedis = false;
  }
  if (!hasRedis || process.env.BENCH_AUDIT === 'memory') {
    return { stores: MEMBERS.map(() => new MemoryAuditStore()), kind: hasRedis ? 'memory (BENCH_AUDIT=memory)' : 'memory (redis-server not installed)', close: async () => undefined };
  }
  const servers = await Promise.all(MEMBERS.map(() => RedisServer.start()));
  const stores = servers.map(
    (s, i) => new RedisAuditStore(redisAuditStoreOptions.parse({ url: s.url, keyPrefix: `bench-${i}:` }), log),
  );
  for (const s of stores) await s.start();
  return {
    stores,
    kind: 'redis (one spawned redis-server per member)',
    close: async () => {
      for (const s of stores) await s.stop();
      for (const s of servers) await s.close();
    },
  };
}

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Math.round((process.memoryUsage().heapUsed / 1024 / 1024) * 10) / 10;
}

async function benchCluster() {
  const audit = await auditStores();
  const cluster = await raftCluster(audit.stores);
  try {
    const { engine, leader } = cluster;
    const authorities = Array.from({ length: CONCURRENCY }, (_, i) => `a${i}`);
    for (const a of authorities) await leader.propose({ type: 'transfer_authority', authority: a, target: 'east' });

    // Commit latency: one transfer at a time, target already at the barrier.
    const commit: number[] = [];
    for (let i = 0; i < COMMITS; i++) {
      const authority = authorities[0];
      const home = leader.view().state.authorities.get(authority)!.home;
      const t0 = performance.now();
      await engine.start({ id: `l${i}`, authority, source: home, target: home === 'east' ? 'west' : 'east', actor: 'bench', reason: 'latency' });
      commit.push(performance.now() - t0);
    }

    // Throughput: CONCURRENCY workers, each moving its own authority back and forth.
    const heapBefore = heapMb();
    let next = 0;
    let done = 0;
    // Sampled once the consensus idempotency windows (10,000 keys per member) are full: from
    // there on, growth between this sample and the end is what would leak per transfer.
    let heapMid: number | undefined;
    const t0 = performance.now();
    await Promise.all(
      authorities.map(async (authority) => {
        for (let i = next++; i < TRANSFERS; i = next++) {
          const home = leader.view().state.authorities.get(authority)!.home;
          await engine.start({ id: `t${i}`, authority, source: home, target: home === 'east' ? 'west' : 'east', actor: 'bench', reason: 'throughput' });
          if (++done === Math.floor(TRANSFERS / 2)) heapMid = heapMb();
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    // Let the followers' acknowledgements land before measuring what stays behind.
    const settle = performance.now() + 10_000;
    while (leader.view().state.pending.size > 0 && performance.now() < settle) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const heapAfter = heapMb();
    return {
      auditStore: audit.kind,
      commitLatency: summary(commit),
      transfers: TRANSFERS,
      concurrency: CONCURRENCY,
      transfersPerSec: Math.round(TRANSFERS / seconds),
      heapBeforeMb: heapBefore,
      heapMidMb: heapMid ?? null,
      heapAfterMb: heapAfter,
      registryAfter: cluster.engines.reduce((n, e) => n + e.engine.registry.size, 0),
      pendingAfter: leader.view().state.pending.size,
    };
  } finally {
    for (const e of cluster.engines) {
      e.projection.stop();
      e.freezes.stop();
      e.engine.stop();
    }
    for (const m of cluster.members) await m.stop();
    await audit.close();
  }
}

const cancel = await benchCancel();
const cluster = await benchCluster();
const freeze = await benchFreezeWindow(FREEZE_TRANSFERS);
const rows = [
  ['cancel answer while probe blocked', `p50 ${cancel.cancelAnswer.p50Ms} ms`, `p99 ${cancel.cancelAnswer.p99Ms} ms`, `n=${cancel.cancelAnswer.n}`],
  ['cancelled run ends', `p50 ${cancel.runEnded.p50Ms} ms`, `p99 ${cancel.runEnded.p99Ms} ms`, `n=${cancel.runEnded.n}`],
  ['commit latency (3-member raft)', `p50 ${cluster.commitLatency.p50Ms} ms`, `p99 ${cluster.commitLatency.p99Ms} ms`, `n=${cluster.commitLatency.n}`],
  ['transfers/s', String(cluster.transfersPerSec), `${cluster.transfers} transfers`, `concurrency ${cluster.concurrency}`],
  ['heap before/mid/after (MB)', `${cluster.heapBeforeMb} / ${cluster.heapMidMb}`, String(cluster.heapAfterMb), `registry ${cluster.registryAfter}, pending ${cluster.pendingAfter}`],
  ['audit store', cluster.auditStore, '', ''],
  ['freeze window, writer racing', `p50 ${freeze.freezeWindow.p50Ms} ms`, `p99 ${freeze.freezeWindow.p99Ms} ms`, `n=${freeze.freezeWindow.n}`],
  ['  of it: freeze until finals', `p50 ${freeze.freezeUntilFinals.p50Ms} ms`, `p99 ${freeze.freezeUntilFinals.p99Ms} ms`, `n=${freeze.freezeUntilFinals.n}`],
  ['  of it: finals until commit', `p50 ${freeze.freezeAfterFinals.p50Ms} ms`, `p99 ${freeze.freezeAfterFinals.p99Ms} ms`, `waiting probes ${freeze.waitingProbes ? 'on' : 'off'}`],
  ['commit latency, writer racing', `p50 ${freeze.commitLatency.p50Ms} ms`, `p99 ${freeze.commitLatency.p99Ms} ms`, `n=${freeze.commitLatency.n}`],
  ['transfers/s, writer racing', String(freeze.transfersPerSec), `${freeze.transfers} transfers`, 'one at a time'],
  ['writes during those transfers', `${freeze.writes.acknowledged} acknowledged`, `${freeze.writes.refusedFrozen} refused frozen`, `${freeze.writes.refusedOther} other refusals`],
];
for (const row of rows) console.log(row.map((c, i) => c.padEnd(i === 0 ? 36 : 22)).join(' '));
console.log(JSON.stringify({ bench: 'authority-transfer', cancel, cluster }));
console.log(JSON.stringify({ bench: 'authority-transfer-freeze', ...freeze }));
// Stopped members can leave a timer behind (an audit projection retry, a final serial's retry):
// the figures are printed, so the process ends here rather than waiting on them.
process.exit(0);
