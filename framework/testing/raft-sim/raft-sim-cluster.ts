import type {
  Clock,
  Logger,
  AppliedEntry,
  AppliedView,
  MetadataConsensus,
  StateMachine,
  MemberId,
  PeerTransport,
  Rng,
} from '@baton/contracts';
import { createSilentLogger } from '@baton/plugin-pino';
import { SimNetwork, type LinkConditions } from '../sim/network.js';
import { SeededRng, VirtualClock } from '@baton/conformance';

/** A consensus member the harness can start and stop: a RaftConsensus, or anything shaped like it. */
export interface RaftSimMember<S, C, R> extends MetadataConsensus<S, C, R> {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What one incarnation of a member is built from: all of it comes from the harness. */
export interface RaftSimMemberOptions<S, C, R, D> {
  self: MemberId;
  voters: MemberId[];
  machine: StateMachine<S, C, R>;
  /** The member's disk: the same object across its crashes and restarts. */
  storage: D;
  transport: PeerTransport;
  clock: Clock;
  rng: Rng;
  logger: Logger;
}

/**
 * How members and their storage are made. The harness imports no consensus plugin (framework
 * code never depends on plugins); a test composes it with the Raft driver and its memory
 * storage, exactly as a host composes a node.
 */
export interface RaftSimFactory<S, C, R, M extends RaftSimMember<S, C, R>, D> {
  /** A fresh, empty disk for a member seen for the first time. */
  storage(member: MemberId): D;
  member(options: RaftSimMemberOptions<S, C, R, D>): M;
}

export interface RaftSimClusterOptions<S, C, R, M extends RaftSimMember<S, C, R>, D> {
  voters: MemberId[];
  machine: StateMachine<S, C, R>;
  factory: RaftSimFactory<S, C, R, M, D>;
  /** Drives every random choice: the network, each member's election timeouts. */
  seed?: number;
  link?: Partial<LinkConditions>;
  logger?: Logger;
}

/** Called for every entry any live member applies, with the member and its incarnation. */
export type AppliedObserver<S, C, R> = (
  member: { id: MemberId; incarnation: number },
  view: AppliedView<S>,
  entry: AppliedEntry<C, R>,
) => void;

/** A fault in force until `heal()` (partitions and isolations; healing one keeps the others). */
export interface NetworkFault {
  readonly description: string;
  heal(): void;
}

/**
 * Consensus members on the simulated network and a virtual clock, over any StateMachine. One
 * seed drives the network (drops, duplicates, delays, reordering) and every member's randomness.
 * Each member's storage survives `crash` + `start` (it loses only what had not been persisted);
 * partitions and isolations are handles healed one by one; `isolateLeader` is leader loss.
 */
export class RaftSimCluster<S, C, R, M extends RaftSimMember<S, C, R>, D> {
  readonly clock = new VirtualClock();
  readonly rng: SeededRng;
  readonly network: SimNetwork;
  readonly logger: Logger;
  readonly machine: StateMachine<S, C, R>;
  readonly voters: MemberId[];
  readonly members = new Map<MemberId, M>();
  readonly storages = new Map<MemberId, D>();
  private readonly factory: RaftSimFactory<S, C, R, M, D>;
  private readonly incarnations = new Map<MemberId, number>();
  private readonly unwatch = new Map<MemberId, () => void>();
  private readonly observers = new Set<AppliedObserver<S, C, R>>();
  private readonly faults = new Set<{ description: string; apply: () => void }>();

  constructor(options: RaftSimClusterOptions<S, C, R, M, D>) {
    this.voters = [...options.voters];
    this.machine = options.machine;
    this.factory = options.factory;
    this.logger = options.logger ?? createSilentLogger();
    this.rng = new SeededRng(options.seed ?? 1);
    this.network = new SimNetwork(
      this.clock,
      this.rng.fork('network'),
      options.link ?? { minDelayMs: 1, maxDelayMs: 3 },
    );
  }

  /** Starts `id` (again, after a crash) on its surviving storage, or on `storage` if given. */
  async start(id: MemberId, storage?: D): Promise<M> {
    if (this.members.has(id))
      throw new Error(`member ${id} is already running; crash or stop it first`);
    const disk = storage ?? this.storages.get(id) ?? this.factory.storage(id);
    this.storages.set(id, disk);
    this.network.restart(id);
    const incarnation = (this.incarnations.get(id) ?? -1) + 1;
    this.incarnations.set(id, incarnation);
    const member = this.factory.member({
      self: id,
      voters: this.voters,
      machine: this.machine,
      storage: disk,
      transport: this.network.transport(id),
      clock: this.clock,
      // Labelled by start time, so a restart draws new election timeouts from the same seed.
      rng: this.rng.fork(`raft-${id}-${this.clock.now()}`),
      logger: this.logger,
    });
    this.members.set(id, member);
    // Watch before start: recovery replays the log, and observers see those applies too.
    this.unwatch.set(
      id,
      member.watch((view, entry) => {
        for (const observer of [...this.observers]) observer({ id, incarnation }, view, entry);
      }),
    );
    await member.start();
    return member;
  }

  async startAll(): Promise<void> {
    for (const id of this.voters) await this.start(id);
  }

  get(id: MemberId): M {
    const m = this.members.get(id);
    if (!m) throw new Error(`no member ${id}`);
    return m;
  }

  isUp(id: MemberId): boolean {
    return this.members.has(id);
  }

  /** The process dies: its network endpoint goes, and the member object is abandoned. */
  async crash(id: MemberId): Promise<void> {
    this.network.crash(id);
    const m = this.members.get(id);
    this.members.delete(id);
    this.unwatch.get(id)?.();
    this.unwatch.delete(id);
    await m?.stop();
  }

  async stopAll(): Promise<void> {
    for (const id of [...this.members.keys()]) {
      this.unwatch.get(id)?.();
      await this.get(id).stop();
    }
  }

  /** Sees every entry applied by every member, recoveries included (see AppliedObserver). */
  onApplied(observer: AppliedObserver<S, C, R>): () => void {
    this.observers.add(observer);
    return () => void this.observers.delete(observer);
  }

  /** The live member that leads in the highest term, if any. */
  leader(): M | undefined {
    let best: M | undefined;
    for (const m of this.members.values()) {
      const l = m.leadership();
      if (l.isLeader && (!best || l.term > best.leadership().term)) best = m;
    }
    return best;
  }

  /** The live member that has applied the most: the freshest local view. */
  mostApplied(): M | undefined {
    let best: M | undefined;
    for (const m of this.members.values())
      if (!best || m.view().applied.index > best.view().applied.index) best = m;
    return best;
  }

  /** Every live member has applied the same entries. */
  converged(): boolean {
    const applied = new Set([...this.members.values()].map((m) => m.view().applied.index));
    return applied.size <= 1;
  }

  // ---- network faults -------------------------------------------------------------------------

  /** Link conditions (drops, duplicates, delays) for every link from now on. */
  setLinks(conditions: Partial<LinkConditions>): void {
    this.network.setDefaults(conditions);
  }

  /** No message crosses between the two groups until the returned fault is healed. */
  partition(groupA: readonly MemberId[], groupB: readonly MemberId[]): NetworkFault {
    return this.addFault(`partition ${groupA.join(',')} | ${groupB.join(',')}`, () =>
      this.network.partition(groupA, groupB),
    );
  }

  /** `id` hears no one and no one hears it, until the returned fault is healed. */
  isolate(id: MemberId): NetworkFault {
    return this.addFault(`isolate ${id}`, () => this.network.isolate(id));
  }

  /** Leader loss: the current leader is cut off, so the others elect a new one. */
  isolateLeader(): NetworkFault | undefined {
    const leader = this.leader();
    return leader ? this.isolate(leader.leadership().self) : undefined;
  }

  /** Faults in force, for a failing seed's report. */
  activeFaults(): string[] {
    return [...this.faults].map((f) => f.description);
  }

  /** Heals every partition and isolation (crashed members stay down). */
  healAll(): void {
    this.faults.clear();
    this.network.heal();
  }

  private addFault(description: string, apply: () => void): NetworkFault {
    const fault = { description, apply };
    this.faults.add(fault);
    apply();
    return {
      description,
      heal: () => {
        if (!this.faults.delete(fault)) return;
        // The network heals all at once: put back the faults still in force.
        this.network.heal();
        for (const f of this.faults) f.apply();
      },
    };
  }

  // ---- virtual time -----------------------------------------------------------------------------

  /** Advances virtual time until `cond` holds; fails after `limitMs` of virtual time. */
  async until(cond: () => boolean, limitMs = 10_000, what = 'condition'): Promise<void> {
    const end = this.clock.now() + limitMs;
    while (!cond()) {
      if (this.clock.now() >= end)
        throw new Error(`${what} did not hold within ${limitMs} virtual ms`);
      await this.clock.advanceAsync(5);
    }
  }

  async waitForLeader(limitMs = 10_000): Promise<M> {
    await this.until(() => this.leader() !== undefined, limitMs, 'a leader');
    return this.leader()!;
  }

  /** Runs `p` while advancing virtual time, until it settles (or `limitMs` passes). */
  async settle<T>(p: Promise<T>, limitMs = 30_000): Promise<T> {
    let done = false;
    const watched = p.finally(() => {
      done = true;
    });
    watched.catch(() => undefined);
    await this.until(() => done, limitMs, 'the operation to settle');
    return watched;
  }
}
