import type { StateMachine } from '../../../../framework/contracts/metadata-consensus.js';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '../../../../framework/testing/fakes/kv-state-machine.js';
import { SimNetwork, type LinkConditions } from '../../../../framework/testing/sim/network.js';
import { SeededRng } from '../../../../framework/testing/sim/seeded-rng.js';
import { VirtualClock } from '../../../../framework/testing/sim/virtual-clock.js';
import { RaftConsensus } from '../../../../plugins/raft/driver/raft-consensus.js';
import type { RaftTuning } from '../../../../plugins/raft/driver/options.js';
import { MemoryRaftStorage } from '../../../../plugins/raft/storage/memory-storage.js';
import type { RaftStorage } from '../../../../plugins/raft/storage/raft-storage.js';
import { MemoryLogger } from './silent-logger.js';

export type KvRaft = RaftConsensus<KvState, KvCommand, KvResult>;

/**
 * RaftConsensus members on the simulated network and a virtual clock, each with storage that
 * survives `crash` + `restart` (losing only what had not been persisted).
 */
export class SimCluster {
  readonly clock = new VirtualClock();
  readonly rng: SeededRng;
  readonly network: SimNetwork;
  readonly logger = new MemoryLogger();
  readonly members = new Map<string, KvRaft>();
  readonly storages = new Map<string, RaftStorage>();
  private readonly ids: string[];
  /** Set when members use real files, so waits also yield to the real event loop. */
  realIo = false;

  constructor(
    readonly voters: string[],
    readonly tuning: Partial<RaftTuning> = {},
    seed = 1,
    link: Partial<LinkConditions> = { minDelayMs: 1, maxDelayMs: 3 },
    readonly machine: StateMachine<KvState, KvCommand, KvResult> = kvStateMachine,
  ) {
    this.rng = new SeededRng(seed);
    this.network = new SimNetwork(this.clock, this.rng.fork('network'), link);
    this.ids = [...voters];
  }

  async start(id: string, storage?: RaftStorage): Promise<KvRaft> {
    const store = storage ?? this.storages.get(id) ?? new MemoryRaftStorage();
    this.storages.set(id, store);
    this.network.restart(id);
    const member = new RaftConsensus<KvState, KvCommand, KvResult>({
      self: id,
      voters: this.voters,
      machine: this.machine,
      storage: store,
      transport: this.network.transport(id),
      clock: this.clock,
      rng: this.rng.fork(`raft-${id}-${this.clock.now()}`),
      logger: this.logger,
      ...this.tuning,
    });
    this.members.set(id, member);
    await member.start();
    return member;
  }

  async startAll(): Promise<void> {
    for (const id of this.ids) await this.start(id);
  }

  get(id: string): KvRaft {
    const m = this.members.get(id);
    if (!m) throw new Error(`no member ${id}`);
    return m;
  }

  /** The process dies: its network endpoint goes, and the member object is abandoned. */
  async crash(id: string): Promise<void> {
    this.network.crash(id);
    const m = this.members.get(id);
    this.members.delete(id);
    await m?.stop();
  }

  async stopAll(): Promise<void> {
    for (const id of [...this.members.keys()]) await this.get(id).stop();
  }

  leader(): KvRaft | undefined {
    let best: KvRaft | undefined;
    for (const m of this.members.values()) {
      const l = m.leadership();
      if (l.isLeader && (!best || l.term > best.leadership().term)) best = m;
    }
    return best;
  }

  /** Advances virtual time until `cond` holds; fails after `limitMs` of virtual time. */
  async until(cond: () => boolean, limitMs = 10_000, what = 'condition'): Promise<void> {
    const end = this.clock.now() + limitMs;
    while (!cond()) {
      if (this.clock.now() >= end) throw new Error(`${what} did not hold within ${limitMs} virtual ms`);
      await this.clock.advanceAsync(5);
      // Real I/O (file storage) completes on the real event loop, outside virtual time.
      if (this.realIo) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async waitForLeader(limitMs = 10_000): Promise<KvRaft> {
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
