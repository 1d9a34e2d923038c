import {
  AuditProjection,
  type OwnershipConsensus,
} from '@baton/authority-transfer/internal/audit-projection.js';
import { ChangeFeed, type FeedOrigin } from '@baton/authority-transfer/internal/change-feed.js';
import { MemoryFiles } from '@baton/kernel/internal/byte-files.js';
import { AppliedWaits } from '@baton/authority-transfer/internal/applied-waits.js';
import { FeedReplicas } from '@baton/authority-transfer/internal/feed-replicas.js';
import {
  datacenterFrontier,
  type FrontierProbe,
  type FrontierReading,
  type ProbeOptions,
} from '@baton/authority-transfer/internal/frontier-probe.js';
import type {
  OwnershipCommand,
  OwnershipResult,
  OwnershipState,
} from '@baton/authority-transfer/internal/ownership.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { FreezeAcknowledger } from '@baton/authority-transfer/internal/freeze-acknowledger.js';
import { TransferDriver as PlannedTransferEngine } from '@baton/authority-transfer/internal/transfer-driver.js';
import type { FeedPosition, SourcePositions } from '@baton/authority-transfer/internal/source-positions.js';
import { Roster } from '@baton/authority-transfer/internal/roster.js';
import { HomeCatchUp } from '@baton/authority-transfer/internal/home-catch-up.js';
import { WriteFence } from '@baton/authority-transfer/internal/write-fence.js';
import {
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedEntry,
  type AppliedView,
  type Leadership,
  type MetadataConsensus,
  type ProposeOptions,
} from '@baton/contracts/internal/metadata-consensus.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';

type Log = LocalConsensus<OwnershipState, OwnershipCommand, OwnershipResult>;
type Watcher = (
  view: AppliedView<OwnershipState>,
  entry: AppliedEntry<OwnershipCommand, OwnershipResult>,
) => void;

export const DATACENTERS = ['east', 'west', 'north'] as const;
export const MEMBERS = ['east-1', 'west-1', 'north-1'] as const;

/** The three datacenters' roster, one member each. */
export function simRoster(): Roster {
  return new Roster(
    Object.fromEntries(
      DATACENTERS.map((dc) => [dc, { members: { [`${dc}-1`]: { public: `http://${dc}-1.sim` } } }]),
    ),
  );
}

/**
 * What a member needs from the cluster it runs in, whichever carries the ownership consensus
 * (one shared fake log here, Raft members in raft-cluster.ts): time, randomness, the roster, the
 * other members (a probe reads their replicas), and which datacenters are cut apart.
 */
export interface MemberEnv {
  readonly clock: VirtualClock;
  readonly rng: SeededRng;
  readonly roster: Roster;
  readonly budgetMs: number;
  readonly members: Map<string, SimMember>;
  datacenterOf(member: string): string;
  partitioned(a: string, b: string): boolean;
}

/**
 * A three-datacenter cluster in virtual time. The replicated log is one LocalConsensus that
 * every member sees at once (replication itself is the Raft plugin's business, tested there);
 * what the simulation varies is everything the transfer protocol must survive: which member
 * leads, leader loss mid-commit (with or without the entry appended), partitions between
 * datacenters (probes hang until their timeout, proposals and reads fail), audit store
 * failures, member crash-restarts (plans lost) and consensus restarts from a snapshot.
 */
export class SimCluster implements MemberEnv {
  readonly roster = simRoster();
  log: Log;
  leader: string | undefined = 'east-1';
  term = 1;
  readonly partitions = new Set<string>();
  readonly members = new Map<string, SimMember>();
  /**
   * Runs before a member's proposal reaches the log (a fault a test injects at that moment: a
   * target that loses its disk between the driver's last probe and the commit, for instance).
   */
  beforePropose: ((command: OwnershipCommand, proposer: string) => Promise<void>) | undefined;
  private readonly machine = new OwnershipStateMachine();
  private readonly watchers = new Set<Watcher>();
  private unwatch: () => void = () => undefined;

  constructor(
    readonly clock: VirtualClock,
    readonly rng: SeededRng,
    readonly budgetMs: number,
  ) {
    this.log = new LocalConsensus(this.machine, { self: 'log', voters: [...MEMBERS], clock });
    this.subscribe();
    for (const id of MEMBERS) {
      const consensus = new SimConsensus(this, id);
      this.members.set(id, new SimMember(this, id, () => consensus));
    }
  }

  /** Boots every member (recovers its feed): before the first step. */
  async open(): Promise<void> {
    for (const member of this.members.values()) await member.boot();
  }

  datacenterOf(member: string): string {
    return this.roster.datacenterOfMember(member)!;
  }

  partitioned(a: string, b: string): boolean {
    return a !== b && (this.partitions.has(`${a}|${b}`) || this.partitions.has(`${b}|${a}`));
  }

  /** Can `member` reach the leader right now? */
  reachesLeader(member: string): boolean {
    return (
      this.leader !== undefined &&
      !this.partitioned(this.datacenterOf(member), this.datacenterOf(this.leader))
    );
  }

  elect(member: string | undefined): void {
    this.leader = member;
    this.term++;
    if (member) this.log.setLeadership({ isLeader: true, term: this.term });
    for (const m of this.members.values()) (m.consensus as SimConsensus).announceLeadership();
  }

  /** The consensus process restarts from its snapshot: what was committed survives. */
  restartLog(): void {
    const snapshot = JSON.parse(JSON.stringify(this.log.snapshot()));
    this.unwatch();
    this.log = LocalConsensus.fromSnapshot(this.machine, snapshot, { clock: this.clock });
    this.subscribe();
  }

  watch(fn: Watcher): () => void {
    this.watchers.add(fn);
    return () => void this.watchers.delete(fn);
  }

  /** One log: every entry is seen once, in order. */
  watchLog(fn: Watcher): void {
    this.watch(fn);
  }

  pendingAudits(): string[] {
    return [...this.log.view().state.pending.keys()];
  }

  private subscribe(): void {
    this.unwatch = this.log.watch((view, entry) => {
      for (const fn of [...this.watchers]) fn(view, entry);
    });
  }
}

/** One member's view of the shared log, with its own identity and leadership. */
export class SimConsensus implements MetadataConsensus<
  OwnershipState,
  OwnershipCommand,
  OwnershipResult
> {
  private readonly leadershipListeners = new Set<(l: Leadership) => void>();

  constructor(
    private readonly cluster: SimCluster,
    readonly self: string,
  ) {}

  async propose(command: OwnershipCommand, options?: ProposeOptions) {
    await this.cluster.beforePropose?.(command, this.self);
    if (!this.cluster.reachesLeader(this.self)) {
      throw this.cluster.rng.chance(0.5)
        ? new NotAppendedError('no_leader', `${this.self} reaches no leader`)
        : new OutcomeUnknownError('timeout', `${this.self} got no answer from the leader`);
    }
    return this.cluster.log.propose(command, options);
  }

  async read() {
    if (!this.cluster.reachesLeader(this.self))
      throw new ReadUnavailableError(`${this.self} reaches no leader`);
    return this.cluster.log.read();
  }

  view() {
    return this.cluster.log.view();
  }

  watch(fn: Watcher): () => void {
    return this.cluster.watch(fn);
  }

  leadership(): Leadership {
    return {
      self: this.self,
      isLeader: this.cluster.leader === this.self,
      leader: this.cluster.leader,
      term: this.cluster.term,
    };
  }

  onLeadership(fn: (l: Leadership) => void): () => void {
    this.leadershipListeners.add(fn);
    return () => void this.leadershipListeners.delete(fn);
  }

  announceLeadership(): void {
    for (const fn of [...this.leadershipListeners]) fn(this.leadership());
  }

  membership() {
    return this.cluster.log.membership();
  }

  addVoter(member: string) {
    return this.cluster.log.addVoter(member);
  }

  removeVoter(member: string) {
    return this.cluster.log.removeVoter(member);
  }
}

/** Probes through the simulated network: a partitioned target hangs until the probe's timeout. */
class SimProbe implements FrontierProbe {
  constructor(
    private readonly cluster: MemberEnv,
    private readonly from: string,
  ) {}

  async probe(
    target: string,
    origin: FeedOrigin,
    options: ProbeOptions,
  ): Promise<FrontierReading | undefined> {
    const { clock, rng } = this.cluster;
    const members = this.cluster.roster.membersOf(target);
    const fromDc = this.cluster.datacenterOf(this.from);
    if (members.length === 0) return undefined;
    if (this.cluster.partitioned(fromDc, target)) {
      await clock.sleep(options.timeoutMs, options.signal);
      return undefined;
    }
    await clock.sleep(1 + rng.int(30), options.signal);
    // A waiting probe is held at each target member until its replica applies the serial (or
    // the wait runs out), as the applied route holds it.
    const wait = options.waitFor;
    return datacenterFrontier(
      await Promise.all(
        members.map(async (m) => {
          const member = this.cluster.members.get(m.id)!;
          if (wait && !member.down) await member.waits.wait(origin, wait.serial, wait.waitMs, { requester: this.from, signal: options.signal });
          if (member.down) return undefined;
          return { member: m.id, serial: member.holds(origin), replica: member.replicas.applied(origin.member).storage, ...(wait ? { waited: true } : {}) };
        }),
      ),
    );
  }
}

/**
 * Reads the source members' serials through the simulated network: a partitioned source hangs
 * until the read's timeout and fails, as an unreachable peer does.
 */
class SimSourcePositions implements SourcePositions {
  constructor(
    private readonly cluster: MemberEnv,
    private readonly from: string,
  ) {}

  async read(datacenter: string, options: { signal?: AbortSignal; timeoutMs: number }): Promise<FeedPosition[]> {
    const { clock, rng } = this.cluster;
    if (this.cluster.partitioned(this.cluster.datacenterOf(this.from), datacenter)) {
      await clock.sleep(options.timeoutMs, options.signal);
      throw new Error(`${datacenter} is unreachable from ${this.from}`);
    }
    await clock.sleep(1 + rng.int(20), options.signal);
    return this.cluster.roster.membersOf(datacenter).map((m) => {
      const member = this.cluster.members.get(m.id)!;
      if (member.down) throw new Error(`${m.id} is restarting`);
      const feed = member.feed;
      return { member: m.id, incarnation: feed.incarnation, serial: feed.serial() };
    });
  }
}

/**
 * One member: its feed, replicas and audit store are on its disk and survive a crash (the feed is
 * recovered from its files); its engine and projection do not. `loseDisk` also wipes the feed
 * and replicas: the feed comes back under a new incarnation at serial 0.
 */
export class SimMember {
  feed!: ChangeFeed;
  replicas!: FeedReplicas;
  /** The waiting probes parked on this member's replicas. */
  waits!: AppliedWaits;
  readonly audit = new MemoryAuditStore();
  fence!: WriteFence;
  catchUp!: HomeCatchUp;
  /** How many times this member booted (a restart makes what it held before say nothing of now). */
  boots = 0;
  engine!: PlannedTransferEngine;
  projection!: AuditProjection;
  freezes!: FreezeAcknowledger;
  readonly datacenter: string;
  /** From a crash (halt) to the end of the boot after it: nothing can be read from it. */
  down = false;
  private feedFiles = new MemoryFiles();
  private replicaFiles = new Map<string, MemoryFiles>();

  constructor(
    private readonly cluster: MemberEnv,
    readonly id: string,
    /** The member's consensus as of now (a Raft member is a new object after each restart). */
    private readonly consensusNow: () => OwnershipConsensus,
  ) {
    this.datacenter = cluster.datacenterOf(id);
  }

  get consensus(): OwnershipConsensus {
    return this.consensusNow();
  }

  /** Recovers the feed and replicas from this member's disk and starts a fresh engine. */
  async boot(): Promise<void> {
    this.boots += 1;
    this.feed = new ChangeFeed(this.id, {
      files: this.feedFiles,
      mintIncarnation: () => this.cluster.rng.hex(4),
    });
    await this.feed.open();
    this.replicas = new FeedReplicas(this.id, {
      filesFor: (origin) => {
        if (!this.replicaFiles.has(origin)) this.replicaFiles.set(origin, new MemoryFiles());
        return this.replicaFiles.get(origin)!;
      },
    });
    await this.replicas.open([...MEMBERS]);
    this.waits = new AppliedWaits(this.replicas, this.cluster.clock);
    const log = createSilentLogger();
    this.catchUp = new HomeCatchUp(this.id, this.datacenter, this.replicas, this.consensus, this.cluster.clock, log, {
      homeMembers: MEMBERS.filter((id) => this.cluster.datacenterOf(id) === this.datacenter),
    });
    this.fence = new WriteFence(this.consensus, this.feed, this.datacenter, this.catchUp);
    const { clock } = this.cluster;
    this.projection = new AuditProjection(this.consensus, this.audit, clock, log, {
      retryDelayMs: 200,
      maxRetryDelayMs: 2_000,
    });
    this.engine = new PlannedTransferEngine(
      {
        consensus: this.consensus,
        audit: this.audit,
        projection: this.projection,
        probe: new SimProbe(this.cluster, this.id),
        feed: this.feed,
        clock,
        log,
        sources: new SimSourcePositions(this.cluster, this.id),
      },
      { budgetMs: this.cluster.budgetMs, resolution: { initialDelayMs: 500, maxDelayMs: 5_000 } },
    );
    this.freezes = new FreezeAcknowledger(this.consensus, this.feed, this.datacenter, clock, log);
    this.projection.start();
    this.freezes.start();
    this.catchUp.start();
    this.down = false;
  }

  /** Loses every plan in memory (and with `loseDisk`, the feed and replicas), then boots again. */
  async crashAndRestart(options: { loseDisk?: boolean } = {}): Promise<void> {
    this.halt(options);
    await this.boot();
  }

  /** The process dies: plans in memory are lost; with `loseDisk`, the feed and replicas too. */
  halt(options: { loseDisk?: boolean } = {}): void {
    this.engine.stop();
    this.projection.stop();
    this.down = true;
    this.freezes.stop();
    this.catchUp.stop();
    this.waits.close();
    if (options.loseDisk) {
      this.feedFiles = new MemoryFiles();
      this.replicaFiles = new Map();
    }
  }

  /** The serial of `origin`'s feed this member holds, in that feed's current incarnation. */
  holds(origin: FeedOrigin): number {
    if (origin.member === this.id)
      return this.feed.incarnation === origin.incarnation ? this.feed.serial() : 0;
    return this.replicas.appliedSerial(origin);
  }

  /** Pulls `from`'s feed as the replicator does, up to `lag` entries short of its serial. */
  async pull(from: SimMember, lag = 0): Promise<void> {
    // A member restarting (a crash injected before a commit, which an apply during these pulls
    // can wake) answers no pull, as over HTTP, rather than serve a feed still being recovered.
    if (from.down || this.down) return;
    const feed = from.feed;
    const incarnation = feed.incarnation;
    if (this.replicas.applied(from.id).incarnation !== incarnation)
      await this.replicas.reset(from.id, incarnation);
    if (from.down || from.feed !== feed) return;
    const after = this.replicas.applied(from.id).serial;
    const upTo = Math.max(after, from.feed.serial() - lag);
    const { entries, truncated } = from.feed.read(after, upTo - after);
    if (!truncated && entries.length > 0) await this.replicas.apply(from.id, incarnation, entries);
  }
}
