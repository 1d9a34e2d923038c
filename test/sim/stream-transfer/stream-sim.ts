import { setImmediate as macrotask } from 'node:timers/promises';
import { StoreUnavailableError } from '../../../framework/contracts/errors.js';
import { createSilentLogger } from '../../../framework/kernel/pino-logger.js';
import type { StreamCommand, StreamResult } from '../../../framework/stream-transfer/commands.js';
import { DiskWal } from '../../../framework/stream-transfer/disk-wal.js';
import { HandoffTimeoutError, NotOwnerError } from '../../../framework/stream-transfer/errors.js';
import { HandoffWatcher } from '../../../framework/stream-transfer/handoff-watcher.js';
import type { StreamMetadata } from '../../../framework/stream-transfer/model.js';
import { SegmentReader } from '../../../framework/stream-transfer/segments.js';
import { StreamStateMachine } from '../../../framework/stream-transfer/state-machine.js';
import { StreamNode } from '../../../framework/stream-transfer/stream-node.js';
import { LocalConsensus } from '../../../framework/testing/fakes/local-consensus.js';
import { SimDisk } from '../../../framework/testing/sim/disk.js';
import { SeededRng } from '../../../framework/testing/sim/seeded-rng.js';
import { VirtualClock } from '../../../framework/testing/sim/virtual-clock.js';
import { MemoryObjectStore } from '../../../plugins/memory/memory-object-store.js';
import { MetadataLink } from './metadata-link.js';

export interface SimConfig {
  seed: number;
  nodes: number;
  streams: number;
  appenders: number;
  /** Virtual milliseconds of faults and load before the heal. */
  durationMs: number;
}

interface SimMember {
  id: string;
  link: MetadataLink;
  disk: SimDisk;
  wal?: DiskWal;
  node?: StreamNode;
  watcher?: HandoffWatcher;
}

interface Ack {
  stream: string;
  producer: string;
  seq: number;
  first: number;
  bodies: string[];
  epoch: number;
  node: string;
}

/** A broken invariant, with what the simulation knew at the time. */
export class InvariantViolation extends Error {}

const STEP_MS = 10;

/**
 * The stream-transfer simulation: one seed drives virtual time, the faults (dropped and
 * unanswered proposals, partitions from the metadata, leader loss, object store outages,
 * crash-restart of any node with torn WAL tails) and a workload of concurrent appenders,
 * transfers and drains. Invariants are checked on every applied entry and every acknowledged
 * append, and end to end after the heal.
 */
export class StreamSimulation {
  readonly rng: SeededRng;
  readonly clock = new VirtualClock();
  readonly consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  readonly store = new MemoryObjectStore();
  private readonly logger = createSilentLogger();
  private readonly members: SimMember[] = [];
  private readonly acks: Ack[] = [];
  /** (stream, epoch) -> the node that acknowledged appends at it. */
  private readonly acceptedAt = new Map<string, string>();
  /** (stream, epoch) -> owner, as first seen in the metadata. */
  private readonly ownerAt = new Map<string, string>();
  private readonly epochs = new Map<string, number>();
  private stopped = false;
  private faultsOn = true;
  readonly violations: string[] = [];
  readonly stats = { acks: 0, transfers: 0, drains: 0, crashes: 0, partitions: 0, leaderLosses: 0, outages: 0, hops: 0, parkedTimeouts: 0 };

  constructor(readonly config: SimConfig) {
    this.rng = new SeededRng(config.seed);
    this.consensus.watch((view, entry) => this.checkEntry(view.state, entry.command, entry.result));
  }

  private violate(message: string): void {
    this.violations.push(`t=${this.clock.now()}: ${message}`);
  }

  async run(): Promise<void> {
    const linkRng = this.rng.fork('links');
    for (let i = 0; i < this.config.nodes; i++) {
      const id = `n${i}`;
      const member: SimMember = {
        id,
        link: new MetadataLink(this.consensus, linkRng.fork(id), { dropProbability: 0.02, lostAnswerProbability: 0.02 }),
        disk: new SimDisk(this.rng.fork(`disk-${id}`)),
      };
      this.members.push(member);
      await this.consensus.propose({ type: 'register-node', node: id, address: `sim://${id}`, slots: this.config.streams });
      await this.start(member);
    }
    for (let s = 0; s < this.config.streams; s++) await this.consensus.propose({ type: 'create-stream', stream: `s${s}` });
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
    if (!finished) this.violate('appenders did not stop within 20 virtual seconds');
    else await all;
    await this.checkFinal();
    // Not a graceful stop: a broken run may have flushes that never finish, and nothing is left to check.
    for (const member of this.members) if (member.node) this.crash(member);
  }

  private async step(): Promise<void> {
    for (let i = 0; i < 3; i++) await macrotask();
    this.clock.advance(STEP_MS);
  }

  private async start(member: SimMember): Promise<void> {
    member.wal = new DiskWal(member.disk);
    member.node = new StreamNode(member.link, this.store, member.wal, this.clock, this.logger, { node: member.id, parkPollMs: 20, walCompactionBytes: 2_048 });
    await member.node.start();
    member.watcher = new HandoffWatcher(member.node);
    member.watcher.start();
  }

  private crash(member: SimMember): void {
    member.watcher?.stop();
    member.node?.crash();
    member.wal?.kill();
    member.disk.crash({ tearUnsyncedAppends: true });
    member.node = undefined;
  }

  /** One fault or admin action per step, at most, drawn from the seed. */
  private inject(rng: SeededRng): void {
    if (!this.faultsOn) return;
    const roll = rng.next();
    const member = rng.pick(this.members);
    const state = this.consensus.view().state;
    if (roll < 0.01) {
      const streams = Object.keys(state.streams);
      const stream = rng.pick(streams);
      const target = rng.pick(this.members).id;
      this.stats.transfers += 1;
      this.consensus.propose({ type: 'transfer', stream, target }).catch(() => undefined);
    } else if (roll < 0.012) {
      if (member.node) {
        this.stats.crashes += 1;
        this.crash(member);
        this.later(rng.int(3_000) + 100, () => this.start(member));
      }
    } else if (roll < 0.014) {
      if (!member.link.partitioned) {
        this.stats.partitions += 1;
        member.link.partition();
        this.later(rng.int(4_000) + 200, () => {
          if (member.link.heal()) member.node?.changed();
        });
      }
    } else if (roll < 0.0155) {
      if (this.consensus.leadership().isLeader) {
        this.stats.leaderLosses += 1;
        this.consensus.setLeadership({ isLeader: false });
        this.later(rng.int(3_000) + 100, () => this.consensus.setLeadership({ isLeader: true }));
      }
    } else if (roll < 0.0165) {
      this.stats.outages += 1;
      this.store.failWith(new StoreUnavailableError('sim object store', 'simulated outage'));
      this.later(rng.int(1_500) + 50, () => this.store.failWith(undefined));
    } else if (roll < 0.0172) {
      const draining = Object.values(state.nodes).filter((n) => n.draining);
      this.stats.drains += 1;
      if (draining.length === 0) this.consensus.propose({ type: 'drain', node: member.id, maxInFlight: 2 }).catch(() => undefined);
      else this.consensus.propose({ type: 'undrain', node: draining[0].id }).catch(() => undefined);
    } else if (roll < 0.0175) {
      this.consensus.propose({ type: 'rebalance', maxInFlight: 2 }).catch(() => undefined);
    }
  }

  private later(ms: number, fn: () => unknown): void {
    this.clock.setTimer(ms, () => {
      if (this.faultsOn || !this.stopped) void Promise.resolve(fn()).catch((error) => this.violate(`scheduled step failed: ${error}`));
    });
  }

  /** Ends every fault, restarts crashed nodes, and waits for every transfer to settle. */
  private async heal(): Promise<void> {
    this.faultsOn = false;
    // Let pending fault timers (restarts, heals) fire first, then force the healthy state.
    for (let i = 0; i < 600; i++) await this.step();
    this.store.failWith(undefined);
    if (!this.consensus.leadership().isLeader) this.consensus.setLeadership({ isLeader: true });
    for (const member of this.members) {
      if (member.link.heal()) member.node?.changed();
      if (!member.node) await this.start(member);
    }
    const state = () => this.consensus.view().state;
    for (const node of Object.values(state().nodes)) {
      if (node.draining) await this.consensus.propose({ type: 'undrain', node: node.id });
    }
    const deadline = this.clock.now() + 60_000;
    while (!this.allSettled()) {
      if (this.clock.now() > deadline) {
        this.violate(`not settled 60 s after heal: transfers ${JSON.stringify(state().transfers)}; streams ${JSON.stringify(state().streams)}`);
        return;
      }
      await this.step();
    }
  }

  private allSettled(): boolean {
    const state = this.consensus.view().state;
    if (Object.keys(state.transfers).length > 0) return false;
    return Object.values(state.streams).every((stream) => {
      const owner = this.members.find((m) => m.id === stream.owner)?.node;
      const session = owner?.session(stream.id);
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
        const member = this.members.find((m) => m.id === node)!;
        try {
          if (!member.node) throw new Error('node down');
          const result = await member.node.append(stream, bodies, { id: producer, seq });
          this.recordAck({ stream, producer, seq, first: result.first, bodies, epoch: result.epoch, node });
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
  }

  private recordAck(ack: Ack): void {
    this.stats.acks += 1;
    this.acks.push(ack);
    const key = `${ack.stream}@${ack.epoch}`;
    const other = this.acceptedAt.get(key);
    if (other !== undefined && other !== ack.node) {
      this.violate(`two nodes accepted appends for ${ack.stream} at epoch ${ack.epoch}: ${other} and ${ack.node}`);
    }
    this.acceptedAt.set(key, ack.node);
  }

  /** Per applied entry: epochs only grow, one owner per (stream, epoch), no stale completion applies. */
  private checkEntry(state: StreamMetadata, command: StreamCommand, result: StreamResult): void {
    if (command.type === 'complete') {
      const before = this.epochs.get(command.stream);
      if (result.ok && !result.duplicate && before !== command.epoch) {
        this.violate(`completion at epoch ${command.epoch} applied while the stream was at ${before}`);
      }
    }
    for (const stream of Object.values(state.streams)) {
      const before = this.epochs.get(stream.id) ?? 0;
      if (stream.epoch < before) this.violate(`epoch of ${stream.id} went back from ${before} to ${stream.epoch}`);
      this.epochs.set(stream.id, stream.epoch);
      const key = `${stream.id}@${stream.epoch}`;
      const owner = this.ownerAt.get(key);
      if (owner !== undefined && owner !== stream.owner) {
        this.violate(`${stream.id} at epoch ${stream.epoch} had two owners: ${owner} and ${stream.owner}`);
      }
      this.ownerAt.set(key, stream.owner);
    }
  }

  /** End to end: every acknowledged record readable exactly once, in offset order, no gaps. */
  private async checkFinal(): Promise<void> {
    const reader = new SegmentReader(this.store);
    const state = this.consensus.view().state;
    const stored = new Map<string, string>();
    for (const stream of Object.values(state.streams)) {
      const records = await reader.read(stream.id, 0, 1_000_000);
      const seen = new Map<string, number>();
      records.forEach((record, i) => {
        if (record.offset !== i) this.violate(`${stream.id}: offset ${record.offset} at position ${i} (gap or disorder)`);
        if (seen.has(record.body)) {
          this.violate(`${stream.id}: ${record.body} stored twice (offsets ${seen.get(record.body)} and ${record.offset})`);
        }
        seen.set(record.body, record.offset);
        stored.set(`${stream.id}/${record.offset}`, record.body);
      });
      const tail = this.members.find((m) => m.id === stream.owner)?.node?.session(stream.id)?.tail;
      if (tail !== records.length) this.violate(`${stream.id}: owner's tail is ${tail} but ${records.length} records are stored`);
    }
    for (const ack of this.acks) {
      ack.bodies.forEach((body, i) => {
        const at = `${ack.stream}/${ack.first + i}`;
        const found = stored.get(at);
        if (found !== body) this.violate(`acknowledged ${body} at ${at}, but ${found ?? 'nothing'} is stored there`);
      });
    }
  }
}
