// The freeze window of a planned transfer with a writer racing it: three in-process members
// (east-1, west-1, north-1), each with its own Raft member, change feed, feed replicas, fence,
// freeze acknowledger and engine; the feeds replicate by in-process pulls (every 5 ms, and at
// once when a final serial for the member's datacenter applies). One writer writes to `proj` at
// its home as fast as the fence lets it; transfers move `proj` around the three datacenters, each
// POSTed at a rotating member. The freeze window is measured at the source member: from applying
// the freeze to applying the commit (or the thaw), summed over the freezes of one transfer. It is
// the time the source refuses the authority's writes (503 with Retry-After), per transfer. The
// probes wait at the target for the serial they need (answered on the replica's apply).
import { performance } from 'node:perf_hooks';
import { AuditProjection } from '@baton/authority-transfer/internal/audit-projection.js';
import { ChangeFeed } from '@baton/authority-transfer/internal/change-feed.js';
import { AppliedWaits } from '@baton/authority-transfer/internal/applied-waits.js';
import { FeedReplicas } from '@baton/authority-transfer/internal/feed-replicas.js';
import { FreezeAcknowledger } from '@baton/authority-transfer/internal/freeze-acknowledger.js';
import { datacenterFrontier, type FrontierProbe } from '@baton/authority-transfer/internal/frontier-probe.js';
import type { OwnershipCommand, OwnershipResult, OwnershipState } from '@baton/authority-transfer/internal/ownership.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { TransferDriver as PlannedTransferEngine } from '@baton/authority-transfer/internal/transfer-driver.js';
import type { SourcePositions } from '@baton/authority-transfer/internal/source-positions.js';
import { AuthorityFrozenError } from '@baton/authority-transfer/internal/transfer-errors.js';
import { HomeCatchUp } from '@baton/authority-transfer/internal/home-catch-up.js';
import { WriteFence } from '@baton/authority-transfer/internal/write-fence.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SimNetwork } from '@baton/testing/internal/sim/network.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';

const clock = new SystemClock();
const log = createSilentLogger();
const MEMBERS = { 'east-1': 'east', 'west-1': 'west', 'north-1': 'north' } as const;
type MemberId = keyof typeof MEMBERS;
const IDS = Object.keys(MEMBERS) as MemberId[];
const PULL_MS = 5;
// BENCH_WAITING_PROBES=0 measures the probes that answer at once (the re-probe schedule alone).
const WAITING_PROBES = process.env.BENCH_WAITING_PROBES !== '0';

interface Member {
  id: MemberId;
  datacenter: string;
  raft: RaftConsensus<OwnershipState, OwnershipCommand, OwnershipResult>;
  feed: ChangeFeed;
  replicas: FeedReplicas;
  waits: AppliedWaits;
  fence: WriteFence;
  engine?: PlannedTransferEngine;
  projection?: AuditProjection;
  freezes?: FreezeAcknowledger;
}

/** Pulls `from`'s feed into `to`'s replica, as the feed replicator does over HTTP. */
async function pull(to: Member, from: Member): Promise<void> {
  const incarnation = from.feed.incarnation;
  if (to.replicas.applied(from.id).incarnation !== incarnation) await to.replicas.reset(from.id, incarnation);
  const after = to.replicas.applied(from.id).serial;
  const { entries, truncated } = from.feed.read(after, 10_000);
  if (!truncated && entries.length > 0) await to.replicas.apply(from.id, incarnation, entries);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return { n: sorted.length, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted[sorted.length - 1] ?? 0) };
}

export async function benchFreezeWindow(transfers: number) {
  const network = new SimNetwork(clock, new SeededRng(11).fork('network'), { minDelayMs: 0, maxDelayMs: 0 });
  const members: Member[] = [];
  for (const [i, id] of IDS.entries()) {
    const raft = new RaftConsensus<OwnershipState, OwnershipCommand, OwnershipResult>({
      self: id,
      voters: IDS,
      machine: new OwnershipStateMachine(),
      storage: new MemoryRaftStorage(),
      transport: network.transport(id),
      clock,
      rng: new SeededRng(200 + i),
      logger: log,
      snapshotInterval: 5_000,
      snapshotRetain: 500,
    });
    const feed = new ChangeFeed(id, { mintIncarnation: () => `${id}-bench` });
    await feed.open();
    const replicas = new FeedReplicas(id);
    await replicas.open(IDS);
    members.push({ id, datacenter: MEMBERS[id], raft, feed, replicas, waits: new AppliedWaits(replicas, clock), fence: new WriteFence(raft, feed, MEMBERS[id], new HomeCatchUp(id, MEMBERS[id], replicas, raft, clock, log)) });
  }
  const byDc = (dc: string) => members.filter((m) => m.datacenter === dc);
  let pulling = true;
  const pullAll = async (to: Member) => {
    for (const from of members) if (from !== to) await pull(to, from);
  };
  const pullers = members.map(async (to) => {
    while (pulling) {
      await pullAll(to);
      await clock.sleep(PULL_MS);
    }
  });
  // As the HTTP probe and the applied route do it: a probe asking for a wait is answered by
  // each target member's replica apply (AppliedWaits), or when the wait runs out.
  const probe: FrontierProbe = {
    async probe(target, origin, options) {
      const wait = WAITING_PROBES ? options.waitFor : undefined;
      const readings = await Promise.all(
        byDc(target).map(async (m) => {
          const position = wait
            ? await m.waits.wait(origin, wait.serial, wait.waitMs, { requester: 'bench', signal: options.signal })
            : m.replicas.applied(origin.member);
          const serial = position.incarnation === origin.incarnation ? position.serial : 0;
          return { member: m.id, serial, replica: position.storage, ...(wait ? { waited: true } : {}) };
        }),
      );
      return datacenterFrontier(readings);
    },
  };
  const sources: SourcePositions = {
    async read(datacenter) {
      return byDc(datacenter).map((m) => ({ member: m.id, incarnation: m.feed.incarnation, serial: m.feed.serial() }));
    },
  };
  for (const m of members) await m.raft.start();
  const deadline = performance.now() + 10_000;
  while (!members.some((m) => m.raft.leadership().isLeader)) {
    if (performance.now() > deadline) throw new Error('no Raft leader within 10 s');
    await clock.sleep(5);
  }
  for (const m of members) {
    const audit = new MemoryAuditStore();
    m.projection = new AuditProjection(m.raft, audit, clock, log);
    m.engine = new PlannedTransferEngine({ consensus: m.raft, audit, projection: m.projection, probe, feed: m.feed, clock, log, sources });
    m.freezes = new FreezeAcknowledger(m.raft, m.feed, m.datacenter, clock, log, () => void pullAll(m));
    m.projection.start();
    m.freezes.start();
  }

  // The freeze window, as each source member applies it.
  const frozenSince = new Map<string, number>();
  const frozenFor = new Map<string, number>();
  const finalsAt = new Map<string, number>();
  const untilFinals: number[] = [];
  const afterFinals: number[] = [];
  for (const m of members) {
    m.raft.watch((_view, entry) => {
      const { command, result } = entry;
      if (!result.ok) return;
      const source = command.type === 'commit_planned_transfer' ? command.source : 'intent' in result ? result.intent.source : undefined;
      if (source !== m.datacenter || !('id' in command) || typeof command.id !== 'string') return;
      const id = command.id;
      if (command.type === 'freeze_transfer' && !frozenSince.has(id)) frozenSince.set(id, performance.now());
      // Where a freeze goes: until every final serial is recorded (Raft rounds), then the target's
      // catch-up, the probe and the commit's round (only freezes that end in the commit count).
      if (command.type === 'record_final' && 'intent' in result && result.intent.sources.every((s) => s.final !== undefined)) finalsAt.set(id, performance.now());
      if (command.type === 'thaw_transfer' || command.type === 'commit_planned_transfer' || command.type === 'release_transfer') {
        const since = frozenSince.get(id);
        const finals = finalsAt.get(id);
        if (command.type === 'commit_planned_transfer' && since !== undefined && finals !== undefined && finals >= since) {
          untilFinals.push(finals - since);
          afterFinals.push(performance.now() - finals);
        }
        finalsAt.delete(id);
        if (since !== undefined) {
          frozenFor.set(id, (frozenFor.get(id) ?? 0) + performance.now() - since);
          frozenSince.delete(id);
        }
      }
    });
  }

  const leader = members.find((m) => m.raft.leadership().isLeader)!;
  await leader.raft.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });

  // The writer: as fast as the fence takes writes at the current home.
  let writing = true;
  const writes = { acknowledged: 0, refusedFrozen: 0, refusedOther: 0 };
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      const own = leader.raft.view().state.authorities.get('proj')!;
      const home = byDc(own.home)[0];
      try {
        await home.fence.write('proj', own.epoch, `w${i}`);
        writes.acknowledged += 1;
      } catch (error) {
        if (error instanceof AuthorityFrozenError) writes.refusedFrozen += 1;
        else writes.refusedOther += 1;
        // Back off a millisecond, as a client told Retry-After would (far shorter, to race hard).
        await clock.sleep(1);
      }
    }
  })();

  const commit: number[] = [];
  const datacenters = Object.values(MEMBERS);
  const t0 = performance.now();
  for (let i = 0; i < transfers; i++) {
    const own = leader.raft.view().state.authorities.get('proj')!;
    const target = datacenters[(datacenters.indexOf(own.home as (typeof datacenters)[number]) + 1) % datacenters.length];
    const at = members[i % members.length];
    const started = performance.now();
    await at.engine!.start({ id: `f${i}`, authority: 'proj', source: own.home, target, actor: 'bench', reason: 'freeze window' });
    commit.push(performance.now() - started);
  }
  const seconds = (performance.now() - t0) / 1000;
  writing = false;
  await writer;
  pulling = false;
  await Promise.all(pullers);
  for (const m of members) {
    m.waits.close();
    m.engine!.stop();
    m.freezes!.stop();
    m.projection!.stop();
  }
  for (const m of members) await m.raft.stop();
  return {
    members: IDS.length,
    transfers,
    waitingProbes: WAITING_PROBES,
    freezeWindow: summary([...frozenFor.values()]),
    freezeUntilFinals: summary(untilFinals),
    freezeAfterFinals: summary(afterFinals),
    commitLatency: summary(commit),
    transfersPerSec: Math.round((transfers / seconds) * 10) / 10,
    writes,
  };
}
