import type {
  OwnershipCommand,
  OwnershipResult,
  OwnershipState,
} from '@baton/authority-transfer/internal/ownership.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import type { AppliedEntry, AppliedView } from '@baton/contracts/internal/metadata-consensus.js';
import {
  RaftSimCluster,
  type NetworkFault,
} from '@baton/testing/internal/raft-sim/raft-sim-cluster.js';
import type { LinkConditions } from '@baton/testing/internal/sim/network.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { RaftTuning } from '@baton/plugin-raft/internal/driver/options.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import type { ObservedCluster } from './authority-invariants.js';
import { MEMBERS, SimMember, simRoster, type MemberEnv } from './sim-cluster.js';

type OwnershipRaft = RaftConsensus<OwnershipState, OwnershipCommand, OwnershipResult>;

/**
 * Ticks of 50 ms (an election takes about a virtual second) keep a run of several virtual
 * minutes cheap; small snapshots make restarted and lagging members catch up by snapshot.
 */
const TUNING: Partial<RaftTuning> = {
  tickMs: 50,
  electionTicks: 10,
  heartbeatTicks: 2,
  snapshotInterval: 32,
  snapshotRetain: 8,
  proposeTimeoutMs: 5_000,
  readTimeoutMs: 5_000,
};

/**
 * Three datacenters, one member each, whose ownership consensus is a RaftConsensus member per
 * datacenter on the simulated network (drops, duplicates and delays from the seed). A
 * partition between two datacenters cuts both the Raft traffic and the frontier probes; leader
 * loss isolates the leader; a crash restarts the member's Raft from its storage and its
 * engine from nothing (plans in memory are lost).
 */
export class RaftAuthorityCluster implements MemberEnv, ObservedCluster {
  readonly raft: RaftSimCluster<
    OwnershipState,
    OwnershipCommand,
    OwnershipResult,
    OwnershipRaft,
    MemoryRaftStorage
  >;
  readonly roster = simRoster();
  readonly members = new Map<string, SimMember>();
  readonly link: LinkConditions;
  private readonly cuts = new Map<string, NetworkFault>();
  private readonly faults: NetworkFault[] = [];
  /** Runs before a member's proposal reaches its Raft (a fault injected at that moment, see SimCluster). */
  beforePropose: ((command: OwnershipCommand, proposer: string) => Promise<void>) | undefined;
  /** Each Raft member object as its SimMember sees it: `propose` passes through `beforePropose`. */
  private readonly hooked = new WeakMap<OwnershipRaft, OwnershipRaft>();

  constructor(
    seed: number,
    readonly rng: SeededRng,
    readonly budgetMs: number,
  ) {
    this.link = {
      dropProbability: rng.pick([0, 0.02, 0.1]),
      duplicateProbability: rng.pick([0, 0.02]),
      minDelayMs: 1,
      maxDelayMs: rng.pick([5, 30, 80]),
    };
    this.raft = new RaftSimCluster({
      voters: [...MEMBERS],
      seed,
      link: this.link,
      machine: new OwnershipStateMachine(),
      factory: {
        storage: () => new MemoryRaftStorage(),
        member: (options) =>
          new RaftConsensus<OwnershipState, OwnershipCommand, OwnershipResult>({
            ...options,
            ...TUNING,
          }),
      },
    });
    for (const id of MEMBERS)
      this.members.set(id, new SimMember(this, id, () => this.withHook(id, this.raft.get(id))));
  }

  private withHook(id: string, member: OwnershipRaft): OwnershipRaft {
    let hooked = this.hooked.get(member);
    if (!hooked) {
      const propose: OwnershipRaft['propose'] = async (command, options) => {
        await this.beforePropose?.(command, id);
        return member.propose(command, options);
      };
      hooked = new Proxy(member, {
        get: (target, property) => {
          if (property === 'propose') return propose;
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      this.hooked.set(member, hooked);
    }
    return hooked;
  }

  get clock() {
    return this.raft.clock;
  }

  /** Starts every Raft member, then boots each member's feed, engine and projection. */
  async open(): Promise<void> {
    await this.raft.startAll();
    for (const member of this.members.values()) await member.boot();
  }

  datacenterOf(member: string): string {
    return this.roster.datacenterOfMember(member)!;
  }

  partitioned(a: string, b: string): boolean {
    return a !== b && this.cuts.has([a, b].sort().join('|'));
  }

  /** No message crosses between the two datacenters (Raft or probe) until `healAll`. */
  cut(a: string, b: string): void {
    if (a === b || this.partitioned(a, b)) return;
    const fault = this.raft.partition(
      this.roster.membersOf(a).map((m) => m.id),
      this.roster.membersOf(b).map((m) => m.id),
    );
    this.cuts.set([a, b].sort().join('|'), fault);
  }

  /** The leader is cut off (mid-commit, maybe): the others elect a new one. */
  loseLeader(): void {
    const fault = this.raft.isolateLeader();
    if (fault) this.faults.push(fault);
  }

  healAll(): void {
    this.cuts.clear();
    this.faults.length = 0;
    this.raft.healAll();
  }

  /** The member's process dies and comes back: Raft from its storage, the engine from nothing. */
  async crashAndRestart(member: SimMember, options: { loseDisk?: boolean } = {}): Promise<void> {
    member.halt(options);
    await this.raft.crash(member.id);
    await this.raft.start(member.id);
    await member.boot();
  }

  /**
   * Each index once, on its first application anywhere: first applications come in log order
   * (each replica applies in order, and every index is applied somewhere before a snapshot
   * covers it).
   */
  watchLog(
    fn: (
      view: AppliedView<OwnershipState>,
      entry: AppliedEntry<OwnershipCommand, OwnershipResult>,
    ) => void,
  ): void {
    let last = 0;
    this.raft.onApplied((_member, view, entry) => {
      if (entry.position.index <= last) return;
      last = entry.position.index;
      fn(view, entry);
    });
  }

  /** The freshest view of the ownership state. */
  state(): OwnershipState {
    return this.raft.mostApplied()!.view().state;
  }

  pendingAudits(): string[] {
    return [...this.state().pending.keys()];
  }
}
