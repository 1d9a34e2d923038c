import { setImmediate as macrotask } from 'node:timers/promises';
import { StoreUnavailableError } from '../../../framework/contracts/errors.js';
import { createSilentLogger } from '../../../framework/kernel/pino-logger.js';
import { DiskWal } from '../../../framework/stream-transfer/disk-wal.js';
import { HandoffTimeoutError, NotOwnerError } from '../../../framework/stream-transfer/errors.js';
import type { StreamCommand } from '../../../framework/stream-transfer/commands.js';
import { HandoffWatcher } from '../../../framework/stream-transfer/handoff-watcher.js';
import { StreamNode } from '../../../framework/stream-transfer/stream-node.js';
import { SimDisk } from '../../../framework/testing/sim/disk.js';
import { SeededRng } from '../../../framework/testing/sim/seeded-rng.js';
import { MemoryObjectStore } from '../../../plugins/memory/memory-object-store.js';
import type { StreamMetadataBackend, Undo } from './metadata-backend.js';
import { StreamInvariants } from './stream-invariants.js';

export interface SimConfig {
  seed: number;
  nodes: number;
  streams: number;
  appenders: number;
  /** Virtual milliseconds of faults and load before the heal. */
  durationMs: number;
  /** What carries the metadata, built from the run's rng (a fake log, or Raft members). */
  metadata: (nodes: string[], rng: SeededRng) => StreamMetadataBackend;
}

interface SimMember {
  id: string;
  disk: SimDisk;
  wal?: DiskWal;
  node?: StreamNode;
  watcher?: HandoffWatcher;
  /** A restart in progress (its metadata member may still be recovering). */
  starting?: Promise<void>;
}

const STEP_MS = 10;

/**
 * The stream-transfer simulation: one seed drives virtual time, the faults (metadata partitions
 * and leader loss as the backend makes them, object store outages, crash-restart of any node
 * with torn WAL tails) and a workload of concurrent appenders, transfers and drains. The
 * StreamInvariants are checked on every applied entry of every replica and every acknowledged
 * append, and end to end after the heal.
 */
export class StreamSimulation {
  readonly rng: SeededRng;
  readonly metadata: StreamMetadataBackend;
  readonly store = new MemoryObjectStore();
  readonly invariants: StreamInvariants;
  private readonly logger = createSilentLogger();
  private readonly members: SimMember[] = [];
  private stopped = false;
  private faultsOn = true;
  private operatorKeys = 0;
  /** The metadata's own report, taken once healed (before the final crash of every node). */
  private metadataReport: Record<string, unknown> = {};
  /** What each appender is waiting on, for the report of one that never stops. */
  private readonly appenderWaits = new Map<string, string>();
  readonly stats = {
    acks: 0,
    transfers: 0,
    drains: 0,
    crashes: 0,
    partitions: 0,
    leaderLosses: 0,
    outages: 0,
    hops: 0,
    parkedTimeouts: 0,
  };

  constructor(readonly config: SimConfig) {
    this.rng = new SeededRng(config.seed);
    const ids = Array.from({ length: config.nodes }, (_, i) => `n${i}`);
    this.metadata = config.metadata(ids, this.rng.fork('metadata'));
    this.invariants = new StreamInvariants(() => this.clock.now());
    const checkers = new Map<string, ReturnType<StreamInvariants['replica']>>();
    this.metadata.onApplied((replica, state, entry) => {
      let check = checkers.get(replica);
      if (!check) checkers.set(replica, (check = this.invariants.replica(replica)));
      check(state, entry);
    });
    for (const id of ids) this.members.push({ id, disk: new SimDisk(this.rng.fork(`disk-${id}`)) });
  }

  get clock() {
    return this.metadata.clock;
  }

  get violations(): string[] {
    return this.invariants.violations;
  }

  private violate(message: string): void {
    this.invariants.violate(message);
  }

  async run(): Promise<void> {
    for (const member of this.members) await this.start(member);
    for (const member of this.members) {
      await this.must({
        type: 'register-node',
        node: member.id,
        address: `sim://${member.id}`,
        slots: this.config.streams,
      });
    }
    for (let s = 0; s < this.config.streams; s++)
      await this.must({ type: 'create-stream', stream: `s${s}` });
    const appenders = Array.from({ length: this.config.appenders }, (_, i) => this.appender(i));
    const faultRng = this.rng.fork('faults');
    const end = this.clock.now() + this.config.durationMs;
    while (this.clock.now() < end) {
      await this.step();
      this.inject(faultRng);
      if (this.violations.length > 0) break;
    }
    await this.heal();
    this.stopped = true;
    let finished = false;
    const all = Promise.all(appenders).finally(() => (finished = true));
    // Appenders sleep on virtual time: keep it moving until every one has noticed the stop.
    for (let i = 0; i < 2_000 && !finished; i++) await this.step();
    if (!finished)
      this.violate(
        `appenders did not stop within 20 virtual seconds: ${JSON.stringify(Object.fromEntries(this.appenderWaits))}`,
      );
    else await all;
    await this.invariants.checkFinal(
      this.metadata.view(),
      this.store,
      (stream, owner) => this.member(owner)?.node?.session(stream)?.tail,
    );
    this.metadataReport = this.metadata.describe();
    // Not a graceful stop: a broken run may have flushes that never finish, and nothing is left to check.
    for (const member of this.members) if (member.node) await this.crash(member);
  }

  /** What a report prints about the run. */
  summary(): Record<string, unknown> {
    return {
      ...this.stats,
      entriesChecked: this.invariants.entriesChecked,
      ...this.metadataReport,
    };
  }

  private member(id: string): SimMember | undefined {
    return this.members.find((m) => m.id === id);
  }

  private async step(): Promise<void> {
    for (let i = 0; i < 3; i++) await macrotask();
    await this.metadata.advance(STEP_MS);
  }

  /**
   * An operator's command that must get through (setup, heal): retried under one idempotency
   * key while time moves, so a retry after an unknown outcome cannot apply it twice.
   */
  private async must(command: StreamCommand, limitMs = 60_000): Promise<void> {
    const idempotencyKey = `sim-${this.operatorKeys++}`;
    const deadline = this.clock.now() + limitMs;
    while (this.clock.now() < deadline) {
      let outcome: 'pending' | 'done' | 'failed' = 'pending';
      this.metadata.propose(command, { idempotencyKey }).then(
        () => (outcome = 'done'),
        () => (outcome = 'failed'),
      );
      while (outcome === 'pending') await this.step();
      if (outcome === 'done') return;
      for (let i = 0; i < 10; i++) await this.step();
    }
    throw new Error(`${command.type} did not get through within ${limitMs} virtual ms`);
  }

  private start(member: SimMember): Promise<void> {
    member.starting ??= (async () => {
      const consensus = await this.metadata.connect(member.id);
      member.wal = new DiskWal(member.disk);
      const node = new StreamNode(consensus, this.store, member.wal, this.clock, this.logger, {
        node: member.id,
        parkPollMs: 20,
        walCompactionBytes: 2_048,
      });
      await node.start();
      member.node = node;
      member.watcher = new HandoffWatcher(node);
      member.watcher.start();
    })().finally(() => (member.starting = undefined));
    return member.starting;
  }

  /** The node's process dies, its metadata member with it; unsynced WAL appends are torn. */
  private async crash(member: SimMember): Promise<void> {
    member.watcher?.stop();
    member.node?.crash();
    member.wal?.kill();
    member.disk.crash({ tearUnsyncedAppends: true });
    member.node = undefined;
    await this.metadata.crash(member.id);
  }

  /** One fault or admin action per step, at most, drawn from the seed. */
  private inject(rng: SeededRng): void {
    if (!this.faultsOn) return;
    const roll = rng.next();
    const member = rng.pick(this.members);
    const state = this.metadata.view();
    if (roll < 0.01) {
      const streams = [...state.streams()].map((s) => s.id);
      if (streams.length === 0) return;
      const stream = rng.pick(streams);
      const target = rng.pick(this.members).id;
      this.stats.transfers += 1;
      this.metadata.propose({ type: 'transfer', stream, target }).catch(() => undefined);
    } else if (roll < 0.012) {
      if (member.node) {
        this.stats.crashes += 1;
        const restartIn = rng.int(3_000) + 100;
        void this.crash(member).then(() => this.later(restartIn, () => this.start(member)));
      }
    } else if (roll < 0.014) {
      const undo = this.metadata.partition(member.id, rng);
      if (undo) {
        this.stats.partitions += 1;
        this.later(rng.int(4_000) + 200, () => this.undo(undo));
      }
    } else if (roll < 0.0155) {
      const undo = this.metadata.loseLeader(rng);
      if (undo) {
        this.stats.leaderLosses += 1;
        this.later(rng.int(3_000) + 100, () => this.undo(undo));
      }
    } else if (roll < 0.0165) {
      this.stats.outages += 1;
      this.store.failWith(new StoreUnavailableError('sim object store', 'simulated outage'));
      this.later(rng.int(1_500) + 50, () => this.store.failWith(undefined));
    } else if (roll < 0.0172) {
      const draining = [...state.nodes()].filter((n) => n.draining);
      this.stats.drains += 1;
      if (draining.length === 0)
        this.metadata
          .propose({ type: 'drain', node: member.id, maxInFlight: 2 })
          .catch(() => undefined);
      else this.metadata.propose({ type: 'undrain', node: draining[0].id }).catch(() => undefined);
    } else if (roll < 0.0175) {
      this.metadata.propose({ type: 'rebalance', maxInFlight: 2 }).catch(() => undefined);
    }
  }

  /** Ends a metadata fault; nodes re-read their view, which may have lagged behind. */
  private undo(undo: Undo): void {
    undo();
    for (const member of this.members) member.node?.changed();
  }

  private later(ms: number, fn: () => unknown): void {
    this.clock.setTimer(ms, () => {
      if (this.faultsOn || !this.stopped)
        void Promise.resolve(fn()).catch((error) =>
          this.violate(`scheduled step failed: ${error}`),
        );
    });
  }

  /** Ends every fault, restarts crashed nodes, and waits for every transfer to settle. */
  private async heal(): Promise<void> {
    this.faultsOn = false;
    // Let pending fault timers (restarts, heals) fire first, then force the healthy state.
    for (let i = 0; i < 600; i++) await this.step();
    this.store.failWith(undefined);
    this.undo(() => this.metadata.healAll());
    for (const member of this.members) if (!member.node) await this.start(member);
    for (const node of [...this.metadata.view().nodes()]) {
      if (node.draining) await this.must({ type: 'undrain', node: node.id });
    }
    const deadline = this.clock.now() + 60_000;
    while (!this.allSettled()) {
      if (this.clock.now() > deadline) {
        const state = this.metadata.view();
        this.violate(
          `not settled 60 s after heal: transfers ${JSON.stringify(state.toSnapshot().transfers)}; streams ${JSON.stringify(state.toSnapshot().streams)}; ` +
            `metadata ${JSON.stringify(this.metadata.describe())}`,
        );
        return;
      }
      await this.step();
    }
  }

  private allSettled(): boolean {
    if (!this.metadata.settled()) return false;
    const state = this.metadata.view();
    if (state.transferCount > 0) return false;
    return [...state.streams()].every((stream) => {
      const session = this.member(stream.owner)?.node?.session(stream.id);
      return stream.state === 'open' && session?.epoch === stream.epoch && session.writable;
    });
  }

  /** A producer appending numbered batches to one stream, retrying each batch until acknowledged. */
  private async appender(index: number): Promise<void> {
    const rng = this.rng.fork(`appender-${index}`);
    const producer = `p${index}`;
    const stream = `s${index % this.config.streams}`;
    let node = rng.pick(this.members).id;
    let seq = 0;
    while (!this.stopped) {
      const count = rng.int(3) + 1;
      const bodies = Array.from({ length: count }, (_, i) => `${producer}:${seq}:${i}`);
      for (let attempt = 0; !this.stopped; attempt++) {
        const member = this.member(node)!;
        try {
          if (!member.node) throw new Error('node down');
          this.appenderWaits.set(
            producer,
            `append seq ${seq} to ${stream} on ${node} since t=${this.clock.now()}`,
          );
          const result = await member.node.append(stream, bodies, { id: producer, seq });
          this.stats.acks += 1;
          this.invariants.recordAck({
            stream,
            producer,
            seq,
            first: result.first,
            bodies,
            epoch: result.epoch,
            node,
          });
          break;
        } catch (error) {
          if (error instanceof NotOwnerError) {
            this.stats.hops += 1;
            node = error.owner;
            if (attempt % 10 === 9) await this.clock.sleep(50);
            continue;
          }
          if (error instanceof HandoffTimeoutError) this.stats.parkedTimeouts += 1;
          if (error instanceof Error && error.name === 'StaleProducerSequenceError') {
            this.violate(`producer ${producer} seq ${seq} refused as stale: ${error.message}`);
            return;
          }
          // Down, unavailable, timed out: try again later, maybe elsewhere, with the same seq.
          if (rng.chance(0.3)) node = rng.pick(this.members).id;
          await this.clock.sleep(rng.int(200) + 20);
        }
      }
      seq += 1;
      await this.clock.sleep(rng.int(40));
    }
    this.appenderWaits.delete(producer);
  }
}
