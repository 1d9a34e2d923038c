import { AppliedWaits } from '@baton/authority-transfer/internal/applied-waits.js';
import { AuditProjection } from '@baton/authority-transfer/internal/audit-projection.js';
import { ChangeFeed, type FeedOrigin } from '@baton/authority-transfer/internal/change-feed.js';
import { FreezeAcknowledger } from '@baton/authority-transfer/internal/freeze-acknowledger.js';
import type { FrontierProbe, ProbeOptions } from '@baton/authority-transfer/internal/frontier-probe.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { TransferDriver as PlannedTransferEngine, type PlannedTransferOptions } from '@baton/authority-transfer/internal/transfer-driver.js';
import { SourcePositionError, type SourcePositions } from '@baton/authority-transfer/internal/source-positions.js';
import { HomeCatchUp } from '@baton/authority-transfer/internal/home-catch-up.js';
import { WriteFence } from '@baton/authority-transfer/internal/write-fence.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { FakeCluster } from '@baton/testing/internal/fakes/fake-cluster.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import type { OwnershipLocalConsensus } from './harness.js';

export const CLUSTER_MEMBERS = { 'east-1': 'east', 'west-1': 'west', 'north-1': 'north' } as const;
export type ClusterMemberId = keyof typeof CLUSTER_MEMBERS;

/**
 * Three members (one per datacenter) on one shared log, each with its own feed, audit store,
 * fence, freeze acknowledger and engine; barriers are read from the source member's own feed.
 * What a target holds of a feed is set by the test (`holds`), and the probe reads it.
 */
/**
 * Member `id`'s handle on the shared log: the log itself (every method bound to it, so what a
 * call records, such as the applied position, is the log's, not a copy's), as `id` sees it lead.
 */
function memberOf(log: OwnershipLocalConsensus, id: string): OwnershipLocalConsensus {
  return new Proxy(log, {
    get(target, key) {
      if (key === 'leadership') return () => ({ ...target.leadership(), self: id });
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export async function clusterHarness(options: { engine?: Partial<PlannedTransferOptions>; followerApplyLagMs?: number; waitingProbes?: boolean } = {}) {
  const clock = new VirtualClock();
  const log = new LocalConsensus(new OwnershipStateMachine(), { self: 'east-1', voters: Object.keys(CLUSTER_MEMBERS), clock }) as OwnershipLocalConsensus;
  // With a lag, the members are those of a FakeCluster led by east-1 whose followers apply each
  // entry that much later than the leader, and are answered before they applied their own.
  const lagging =
    options.followerApplyLagMs === undefined
      ? undefined
      : new FakeCluster(new OwnershipStateMachine(), { members: Object.keys(CLUSTER_MEMBERS), clock, followerApplyLagMs: options.followerApplyLagMs });
  const held = new Map<string, number>();
  const key = (datacenter: string, origin: FeedOrigin) => `${datacenter}|${origin.member}|${origin.incarnation}`;
  // With waitingProbes, each target datacenter holds a probe asking for a wait (ProbeOptions.waitFor)
  // until `holds` reaches its serial, as a member's replica apply answers it.
  const latest = new Map<string, { incarnation: string; serial: number }>();
  const announced = new Map<string, (origin: string) => void>();
  const waits = new Map<string, AppliedWaits>(
    Object.values(CLUSTER_MEMBERS).map((dc): [string, AppliedWaits] => [
      dc,
      new AppliedWaits(
        {
          applied: (member) => {
            const at = latest.get(`${dc}|${member}`);
            return { incarnation: at?.incarnation, serial: at?.serial ?? 0, storage: dc };
          },
          onApplied: (listener) => {
            announced.set(dc, listener);
            return () => announced.delete(dc);
          },
        },
        clock,
      ),
    ]),
  );
  const probe: FrontierProbe = {
    async probe(target: string, origin: FeedOrigin, probeOptions: ProbeOptions) {
      await clock.sleep(1, probeOptions.signal);
      const wait = options.waitingProbes ? probeOptions.waitFor : undefined;
      if (wait) await waits.get(target)!.wait(origin, wait.serial, wait.waitMs, { requester: 'probe', signal: probeOptions.signal });
      return { serial: held.get(key(target, origin)) ?? 0, replica: target, ...(wait ? { waited: true } : {}) };
    },
  };
  const feeds = new Map<string, ChangeFeed>();
  /** Datacenters whose members answer no source read (stopped, cut off). */
  const unreadable = new Set<string>();
  const sources: SourcePositions = {
    async read(datacenter: string) {
      if (unreadable.has(datacenter)) throw new SourcePositionError(`${datacenter}-?`, `${datacenter} does not answer`);
      return Object.entries(CLUSTER_MEMBERS)
        .filter(([, dc]) => dc === datacenter)
        .map(([id]) => ({ member: id, incarnation: feeds.get(id)!.incarnation, serial: feeds.get(id)!.serial() }));
    },
  };
  const member = async (id: ClusterMemberId) => {
    const consensus = lagging?.member(id) ?? memberOf(log, id);
    const feed = new ChangeFeed(id, { mintIncarnation: () => `${id}-inc` });
    await feed.open();
    feeds.set(id, feed);
    const audit = new MemoryAuditStore();
    const silent = createSilentLogger();
    const projection = new AuditProjection(consensus, audit, clock, silent);
    const boot = () =>
      new PlannedTransferEngine({ consensus, audit, projection, probe, feed, clock, log: silent, sources }, options.engine);
    const freezes = new FreezeAcknowledger(consensus, feed, CLUSTER_MEMBERS[id], clock, silent);
    freezes.start();
    projection.start();
    // What this member holds of a peer's feed is what the test set for its datacenter.
    const replicas = {
      appliedSerial: (origin: FeedOrigin) => held.get(key(CLUSTER_MEMBERS[id], origin)) ?? 0,
      applied: () => ({ incarnation: undefined, serial: 0, storage: undefined }),
    };
    const fence = new WriteFence(consensus, feed, CLUSTER_MEMBERS[id], new HomeCatchUp(id, CLUSTER_MEMBERS[id], replicas, consensus, clock, silent));
    const m = { id, datacenter: CLUSTER_MEMBERS[id], consensus, feed, audit, fence, engine: boot(), freezes };
    return Object.assign(m, {
      /** The process restarts: plans in memory are lost, the replicated state is not. */
      restart() {
        m.engine.stop();
        m.engine = boot();
      },
    });
  };
  const members = {
    'east-1': await member('east-1'),
    'west-1': await member('west-1'),
    'north-1': await member('north-1'),
  };
  let lagMoves = 0;
  lagging?.member('east-1').watch((_view, entry) => {
    if (entry.command.type === 'commit_planned_transfer' && entry.result.ok) lagMoves++;
  });
  return {
    clock,
    /** The log (with a lag: its leader, east-1, which applies each entry at commit). */
    log: lagging ? (lagging.member('east-1') as unknown as OwnershipLocalConsensus) : log,
    members,
    /** The target datacenter now holds `origin`'s feed through `serial`. */
    holds(datacenter: string, origin: FeedOrigin, serial: number) {
      held.set(key(datacenter, origin), serial);
      latest.set(`${datacenter}|${origin.member}`, { incarnation: origin.incarnation, serial });
      announced.get(datacenter)?.(origin.member);
    },
    /** Source reads of `datacenter` fail until `sourceAnswers` (its members stopped or cut off). */
    sourceDown: (datacenter: string) => unreadable.add(datacenter),
    sourceAnswers: (datacenter: string) => unreadable.delete(datacenter),
    /** The waiting probes parked at `datacenter` (with waitingProbes). */
    parkedAt: (datacenter: string) => waits.get(datacenter)!.size,
    moves: () => (lagging ? lagMoves : log.log().filter((e) => e.command.type === 'commit_planned_transfer' && e.result.ok).length),
  };
}
