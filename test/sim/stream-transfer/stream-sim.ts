import { setImmediate as macrotask } from 'node:timers/promises';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { DiskWal } from '@baton/stream-transfer/internal/disk-wal.js';
import {
  HandoffTimeoutError,
  NotOwnerError,
  StreamFencedError,
} from '@baton/stream-transfer/internal/errors.js';
import type { StreamCommand } from '@baton/stream-transfer/internal/commands.js';
import { HandoffWatcher } from '@baton/stream-transfer/internal/handoff-watcher.js';
import { LivenessObserver } from '@baton/stream-transfer/internal/liveness-observer.js';
import { NodeLease } from '@baton/stream-transfer/internal/node-lease.js';
import { DEFAULT_NODE_LIVENESS_OPTIONS } from '@baton/stream-transfer/internal/node-liveness.js';
import { StreamNode } from '@baton/stream-transfer/internal/stream-node.js';
import { SimDisk } from '@baton/testing/internal/sim/disk.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';
import type { StreamMetadataBackend, Undo } from './metadata-backend.js';
import { latentStore } from './latent-store.js';
import { ProcessPause } from './process-pause.js';
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
  lease?: NodeLease;
  observer?: LivenessObserver;
  /** The process frozen (GC, SIGSTOP): its clock, store and metadata calls all go through this. */
  pause: ProcessPause;
  /** Each process gets its own lease boot id, as a real restart would. */
  boots: number;
  /** A restart in progress (its metadata member may still be recovering). */
  starting?: Promise<void>;
}

const STEP_MS = 10;
/** How long a client waits for an append's answer before it tries another node. */
const CLIENT_TIMEOUT_MS = 1_500;

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
    pauses: 0,
    operatorFailovers: 0,
    automaticFailovers: 0,
    forcedFailovers: 0,
    takeovers: 0,
    fencedSessions: 0,
    fencedAppends: 0,
    leaderLosses: 0,
    outages: 0,
    hops: 0,
    parkedTimeouts: 0,
    clientTimeouts: 0,
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
    for (const id of ids)
      this.members.push({
        id,
        disk: new SimDisk(this.rng.fork(`disk-${id}`)),
        pause: new ProcessPause(),
        boots: 0,
      });
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
      await this.invariants.checkReadable(this.store);
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
    // Liveness may have moved meanwhile (a node isolated until the heal is judged by a new
    // leader's fresh tracker): the cluster must settle again, every node Alive.
    await this.settle();
    await this.invariants.checkReadable(this.store);
    this.invariants.checkHealed(this.metadata.view(), (stream) =>
      this.members.filter((m) => m.node?.session(stream)?.writable).map((m) => m.id),
    );
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
      const { pause } = member;
      const consensus = pause.consensus(await this.metadata.connect(member.id));
      const clock = pause.clock(this.clock);
      const store = pause.store(
        latentStore(this.store, this.clock, this.rng.fork(`store-${member.id}`), 25),
      );
      member.wal = new DiskWal(member.disk);
      const node = new StreamNode(consensus, store, member.wal, clock, this.logger, {
        node: member.id,
        parkPollMs: 20,
        walCompactionBytes: 2_048,
      });
      node.events = {
        takeover: (outcome) => {
          if (outcome === 'claimed') this.stats.takeovers += 1;
        },
        fenced: () => (this.stats.fencedSessions += 1),
      };
      await node.start();
      member.node = node;
      member.watcher = new HandoffWatcher(node);
      member.watcher.start();
      // The default thresholds: Dead after 3 s of silence, failed over automatically 1 s later.
      const liveness = DEFAULT_NODE_LIVENESS_OPTIONS;
      const deps = { self: member.id, consensus, store, clock, logger: this.logger };
      member.boots += 1;
      member.lease = new NodeLease({
        ...deps,
        boot: `boot${member.boots}`,
        renewEveryMs: liveness.renewEveryMs,
        deadAfterMs: liveness.deadAfterMs,
      });
      const lease = member.lease;
      node.acknowledgeable = (acceptedAt) => lease.acknowledgeable(acceptedAt);
      lease.start();
      member.observer = new LivenessObserver({
        ...deps,
        options: liveness,
        events: { failover: () => (this.stats.automaticFailovers += 1) },
      });
      member.observer.start();
    })().finally(() => (member.starting = undefined));
    return member.starting;
  }

  /** The node's process dies, its metadata member with it; unsynced WAL appends are torn. */
  private async crash(member: SimMember): Promise<void> {
    member.watcher?.stop();
    member.lease?.stop();
    member.observer?.stop();
    // A paused process can be killed too; whatever it was waiting for dies with it.
    member.pause.resume();
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
    } else if (roll < 0.0185) {
      // A long pause (GC, SIGSTOP): often past the Dead threshold, so the node is failed over
      // while frozen and comes back a zombie with appends in flight and a stale view.
      if (member.node && !member.pause.paused) {
        this.stats.pauses += 1;
        member.pause.pause(this.clock.now());
        const undo = this.metadata.isolate(member.id);
        this.later(rng.int(8_000) + 200, () => {
          undo?.();
          member.pause.resume();
          member.node?.changed();
        });
      }
    } else if (roll < 0.0195) {
      // Cut off from the metadata while its clients still reach it, long enough to be Dead.
      const undo = this.metadata.partition(member.id, rng);
      if (undo) {
        this.stats.partitions += 1;
        this.later(rng.int(6_000) + 3_000, () => this.undo(undo));
      }
    } else if (roll < 0.0205) {
      // The operator fails over a node the metadata shows Dead.
      const dead = [...state.nodes()].filter((n) => n.liveness === 'Dead');
      if (dead.length > 0) {
        this.stats.operatorFailovers += 1;
        const node = rng.pick(dead).id;
        this.metadata.propose({ type: 'failover', node }).catch(() => undefined);
      }
    } else if (roll < 0.0208) {
      // A forced failover of a node that may be perfectly alive: only the fence stops it.
      this.stats.forcedFailovers += 1;
      this.metadata.propose({ type: 'failover', node: member.id, force: true }).catch(() => undefined);
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
    for (const member of this.members) member.pause.resume();
    this.undo(() => this.metadata.healAll());
    for (const member of this.members) if (!member.node) await this.start(member);
    for (const node of [...this.metadata.view().nodes()]) {
      if (node.draining) await this.must({ type: 'undrain', node: node.id });
    }
    await this.settle();
  }

  /** Moves time until everything is settled; a violation after 60 virtual seconds. */
  private async settle(): Promise<void> {
    const deadline = this.clock.now() + 60_000;
    while (!this.allSettled()) {
      if (this.clock.now() > deadline) {
        const state = this.metadata.view();
        this.violate(
          `not settled 60 s after heal: ${this.unsettledReport()}; transfers ${JSON.stringify(state.toSnapshot().transfers)}; streams ${JSON.stringify(state.toSnapshot().streams)}; ` +
            `nodes ${JSON.stringify([...state.nodes()])}; metadata ${JSON.stringify(this.metadata.describe())}`,
        );
        return;
      }
      await this.step();
    }
  }

  /** What each node holds of the streams not yet served, for the report of a stuck heal. */
  private unsettledReport(): string {
    const state = this.metadata.view();
    const out: string[] = [];
    for (const stream of [...state.streams()]) {
      const owner = this.member(stream.owner);
      const session = owner?.node?.session(stream.id);
      if (stream.state === 'open' && session?.epoch === stream.epoch && session.writable) continue;
      const local = this.members.map((m) => {
        const n = m.node;
        if (!n) return `${m.id}: down`;
        const se = n.session(stream.id);
        const closed = n.closedSession(stream.id);
        return `${m.id}: session ${se ? `${se.epoch}/${se.state}${se.fenced ? '/fenced' : ''}` : '-'} closed ${closed?.epoch ?? '-'} fencedAt ${n.fencedAt(stream.id) ?? '-'} opening ${n.isOpening(stream.id)}`;
      });
      out.push(`${stream.id}@${stream.epoch} on ${stream.owner} [${local.join('; ')}]`);
    }
    return out.join(' | ');
  }

  private allSettled(): boolean {
    if (!this.metadata.settled()) return false;
    const state = this.metadata.view();
    if (state.transferCount > 0) return false;
    // A node that was failed over rejoins: it renews again and is published Alive.
    if ([...state.nodes()].some((n) => (n.liveness ?? 'Alive') !== 'Alive')) return false;
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
          const target = member.node;
          const at = node;
          // The node's answer is an acknowledgement whenever it comes, even to a client that
          // stopped waiting for it: the invariants hold the node to it.
          const answer = member.pause
            .through(() => target.append(stream, bodies, { id: producer, seq }))
            .then((result) => {
              this.stats.acks += 1;
              this.invariants.recordAck({
                stream,
                producer,
                seq,
                first: result.first,
                bodies,
                epoch: result.epoch,
                node: at,
              });
              return result;
            });
          answer.catch(() => undefined);
          // A client gives up on a node that does not answer (paused, say) and tries another
          // with the same sequence number, while its request may still be in flight there.
          const timedOut = this.clock.sleep(CLIENT_TIMEOUT_MS).then(() => 'timeout' as const);
          if ((await Promise.race([answer, timedOut])) === 'timeout') {
            this.stats.clientTimeouts += 1;
            node = rng.pick(this.members).id;
            continue;
          }
          break;
        } catch (error) {
          if (error instanceof NotOwnerError) {
            this.stats.hops += 1;
            node = error.owner;
            if (attempt % 10 === 9) await this.clock.sleep(50);
            continue;
          }
          if (error instanceof HandoffTimeoutError) this.stats.parkedTimeouts += 1;
          if (error instanceof StreamFencedError) this.stats.fencedAppends += 1;
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
