import { setImmediate as macrotask } from 'node:timers/promises';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { DiskWal } from '@baton/stream-transfer/internal/disk-wal.js';
import { HandoffWatcher } from '@baton/stream-transfer/internal/handoff-watcher.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { StreamNode, type StreamConsensus, type StreamNodeOptions } from '@baton/stream-transfer/internal/stream-node.js';
import {
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedView,
  type ProposeOptions,
} from '@baton/contracts/internal/metadata-consensus.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { SimDisk } from '@baton/testing/internal/sim/disk.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import type { ObjectStore, PutOptions } from '@baton/contracts/internal/object-store.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';

/** A fault for proposals matching `match`: refused before appending, or applied with the answer lost. */
export interface ProposalFault {
  match(command: StreamCommand): boolean;
  times: number;
  afterApply: boolean;
}

/** The nodes' view of the shared consensus, with proposal faults injected by command type. */
function faultyConsensus(
  inner: LocalConsensus<StreamMetadata, StreamCommand, StreamResult>,
  faults: ProposalFault[],
  attempts: { command: StreamCommand; at: number }[],
  clock: VirtualClock,
): StreamConsensus {
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property !== 'propose') {
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (command: StreamCommand, options?: ProposeOptions) => {
        attempts.push({ command, at: clock.now() });
        const fault = faults.find((f) => f.times > 0 && f.match(command));
        if (fault) {
          fault.times -= 1;
          if (!fault.afterApply) throw new NotAppendedError('no_leader', `injected refusal of ${command.type}`);
          await target.propose(command, options);
          throw new OutcomeUnknownError('timeout', `injected lost answer of ${command.type}`);
        }
        return target.propose(command, options);
      };
    },
  }) as unknown as StreamConsensus;
}

/**
 * One node's view of the consensus, which a test can cut off from the metadata: its view then
 * stays as it was, it hears of no apply, knows no leader, and its proposals and reads fail,
 * while its own clients (the test) still reach it.
 */
function cuttableConsensus(inner: StreamConsensus, cut: () => AppliedView<StreamMetadata> | undefined, self: string): StreamConsensus {
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      switch (property) {
        case 'view':
          return () => cut() ?? target.view();
        case 'watch':
          return (fn: Parameters<StreamConsensus['watch']>[0]) => target.watch((view, entry) => cut() === undefined && fn(view, entry));
        case 'leadership':
          return () => (cut() ? { self, isLeader: false, term: target.leadership().term } : target.leadership());
        case 'propose':
          return (command: StreamCommand, options?: ProposeOptions) =>
            cut() ? Promise.reject(new NotAppendedError('no_leader', `${self} is cut off from the metadata`)) : target.propose(command, options);
        case 'read':
          return (options?: { signal?: AbortSignal; timeoutMs?: number }) =>
            cut() ? Promise.reject(new ReadUnavailableError(`${self} is cut off from the metadata`)) : target.read(options);
        default:
          return typeof value === 'function' ? value.bind(target) : value;
      }
    },
  }) as StreamConsensus;
}

/** The shared store as one node reaches it: its segment writes can be held in flight. */
function holdableStore(inner: ObjectStore, held: () => (() => void)[] | undefined): ObjectStore {
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'put') return typeof value === 'function' ? value.bind(target) : value;
      return async (key: string, bytes: Uint8Array, options?: PutOptions) => {
        const waiting = key.startsWith('streams/') ? held() : undefined;
        if (waiting) await new Promise<void>((resolve) => waiting.push(resolve));
        return target.put(key, bytes, options);
      };
    },
  });
}

interface Member {
  node: StreamNode;
  watcher: HandoffWatcher;
  wal: DiskWal;
  disk: SimDisk;
}

/**
 * Several stream nodes in one process on virtual time: one shared metadata consensus (every
 * node watches the same published view), one object store, and a simulated disk per node for
 * its WAL, so a crash loses exactly what was not synced.
 */
export class Cluster {
  readonly clock = new VirtualClock();
  readonly consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  readonly store = new MemoryObjectStore();
  readonly logger = createSilentLogger();
  private readonly members = new Map<string, Member>();
  /** Bytes in each node's WAL file right now (synced or not). */
  walBytes(id: string): number {
    return this.disks.get(id)?.size('streams.wal') ?? 0;
  }

  private readonly disks = new Map<string, SimDisk>();
  private readonly faults: ProposalFault[] = [];
  /** Every proposal a node made, with its virtual time. */
  readonly attempts: { command: StreamCommand; at: number }[] = [];
  private readonly nodeConsensus = faultyConsensus(this.consensus, this.faults, this.attempts, this.clock);
  /** Nodes cut off from the metadata, with the view they keep seeing. */
  private readonly cutOff = new Map<string, AppliedView<StreamMetadata>>();
  /** Nodes whose segment writes wait (sent, not yet arrived at the store), with the waiting ones. */
  private readonly held = new Map<string, (() => void)[]>();

  constructor(
    private readonly nodeOptions: Partial<StreamNodeOptions> = {},
    /** The watchers' retry pass; an hour leaves a test with nothing but change notifications. */
    private readonly watcherIntervalMs?: number,
  ) {}

  async addNode(id: string, slots = 100): Promise<StreamNode> {
    await this.must({ type: 'register-node', node: id, address: `http://${id}.test`, slots });
    return this.startNode(id);
  }

  async startNode(id: string): Promise<StreamNode> {
    let disk = this.disks.get(id);
    if (!disk) {
      disk = new SimDisk();
      this.disks.set(id, disk);
    }
    const wal = new DiskWal(disk);
    const consensus = cuttableConsensus(this.nodeConsensus, () => this.cutOff.get(id), id);
    const store = holdableStore(this.store, () => this.held.get(id));
    const node = new StreamNode(consensus, store, wal, this.clock, this.logger, { ...this.nodeOptions, node: id });
    await node.start();
    const watcher = new HandoffWatcher(node, this.watcherIntervalMs);
    watcher.start();
    this.members.set(id, { node, watcher, wal, disk });
    return node;
  }

  /** The next `times` node proposals of this command type fail (refused, or applied and the answer lost). */
  failProposals(type: StreamCommand['type'], times: number, afterApply = false): void {
    this.faults.push({ match: (c) => c.type === type, times, afterApply });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  node(id: string): StreamNode {
    const member = this.members.get(id);
    if (!member) throw new Error(`no node ${id} in this cluster`);
    return member.node;
  }

  /** The process dies: no more writes from it, and its disk keeps only what was synced. */
  crash(id: string): void {
    const member = this.members.get(id)!;
    member.watcher.stop();
    member.node.crash();
    member.wal.kill();
    member.disk.crash();
    this.members.delete(id);
  }

  /** The node loses the metadata (its view freezes) but keeps serving whoever reaches it. */
  cutOffFromMetadata(id: string): void {
    const view = this.consensus.view();
    this.cutOff.set(id, { ...view, state: view.state.clone() });
  }

  /** The node reaches the metadata again and catches up with what it missed. */
  reconnect(id: string): void {
    this.cutOff.delete(id);
    this.members.get(id)?.node.changed();
  }

  /** The node's segment writes from now on are held in flight until released. */
  holdSegmentWrites(id: string): void {
    if (!this.held.has(id)) this.held.set(id, []);
  }

  /** How many segment writes of the node are waiting in flight. */
  heldWrites(id: string): number {
    return this.held.get(id)?.length ?? 0;
  }

  /** The held writes arrive at the store, in the order they were sent; new ones go straight through. */
  releaseSegmentWrites(id: string): void {
    const waiting = this.held.get(id) ?? [];
    this.held.delete(id);
    for (const arrive of waiting) arrive();
  }

  /** The held writes never arrive (the process that sent them died with them). */
  dropSegmentWrites(id: string): void {
    this.held.delete(id);
  }

  async restart(id: string): Promise<StreamNode> {
    return this.startNode(id);
  }

  async stopAll(): Promise<void> {
    for (const member of this.members.values()) {
      member.watcher.stop();
      await member.node.stop();
    }
  }

  get state(): StreamMetadata {
    return this.consensus.view().state;
  }

  async must(command: StreamCommand): Promise<StreamResult> {
    const receipt = await this.consensus.propose(command);
    if (!receipt.result.ok) throw new Error(`${command.type} rejected: ${receipt.result.message}`);
    return receipt.result;
  }

  /** Lets every pending promise chain run (real macrotask turns), without moving virtual time. */
  async quiesce(turns = 5): Promise<void> {
    for (let i = 0; i < turns; i++) await macrotask();
  }

  /**
   * Runs the cluster until `condition` holds, moving virtual time in small steps; fails after
   * `virtualMs` of virtual time, naming what it waited for.
   */
  async until(condition: () => boolean, what: string, virtualMs = 30_000, stepMs = 10): Promise<void> {
    const deadline = this.clock.now() + virtualMs;
    for (;;) {
      await this.quiesce();
      if (condition()) return;
      if (this.clock.now() >= deadline) throw new Error(`timed out after ${virtualMs} virtual ms waiting for ${what}`);
      this.clock.advance(stepMs);
    }
  }

  /** Settles every pending transfer (fails if one does not settle within the virtual deadline). */
  async settled(virtualMs = 30_000): Promise<void> {
    await this.until(() => this.state.transferCount === 0, 'every transfer to settle', virtualMs);
  }

  /** The stream is open on its owner, at the metadata's epoch. */
  serving(stream: string): boolean {
    const record = this.state.stream(stream);
    if (!record || record.state !== 'open' || this.state.transfer(stream)) return false;
    const session = this.members.get(record.owner)?.node.session(stream);
    return session !== undefined && session.epoch === record.epoch && session.writable;
  }
}
