import type { AppliedEntry } from '@baton/contracts/internal/metadata-consensus.js';
import type { ObjectStore } from '@baton/contracts/internal/object-store.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { SegmentReader } from '@baton/stream-transfer/internal/segments.js';

/** An append a node acknowledged: from then on its records must stay readable where they were. */
export interface Ack {
  stream: string;
  producer: string;
  seq: number;
  first: number;
  bodies: string[];
  epoch: number;
  node: string;
}

/**
 * The invariants of seed 000, shared by every stream-transfer simulation whatever carries its
 * metadata (one fake log, or Raft members on a simulated network):
 * - per applied entry: epochs of a stream only grow, one owner per (stream, epoch), and a
 *   completion applies only at the epoch the stream was closed at;
 * - per acknowledged append: at most one node accepts appends for a stream at an epoch;
 * - across replicas: every replica applies the same command with the same result at an index;
 * - end to end: every acknowledged record is readable exactly once, in offset order, no gaps.
 * Violations are collected (a consensus watcher cannot usefully throw) with the time they were seen.
 */
export class StreamInvariants {
  readonly violations: string[] = [];
  readonly acks: Ack[] = [];
  /** Applied entries checked, over all replicas: a run that checked none proved nothing. */
  entriesChecked = 0;
  /** (stream, epoch) -> the node that acknowledged appends at it. */
  private readonly acceptedAt = new Map<string, string>();
  /** (stream, epoch) -> owner, as first seen in any replica's metadata. */
  private readonly ownerAt = new Map<string, string>();
  /** Log index -> what the first replica to apply it applied there. */
  private readonly appliedAt = new Map<number, string>();

  /** stream -> the latest epoch that acknowledged an append, and its node. */
  private readonly latestAck = new Map<string, { epoch: number; node: string }>();
  /** Acknowledged appends not yet seen in the store by `checkReadable`. */
  private unverified: Ack[] = [];
  private stepReader?: SegmentReader;

  constructor(private readonly now: () => number) {}

  /**
   * After every step: each append acknowledged since the last check is readable at the offsets
   * it was given. A store that cannot be read now (an outage) is read at a later step.
   */
  async checkReadable(store: ObjectStore): Promise<void> {
    if (this.unverified.length === 0) return;
    this.stepReader ??= new SegmentReader(store);
    const pending = this.unverified;
    this.unverified = [];
    const byStream = new Map<string, Ack[]>();
    for (const ack of pending) byStream.set(ack.stream, [...(byStream.get(ack.stream) ?? []), ack]);
    for (const [stream, acks] of byStream) {
      const from = Math.min(...acks.map((a) => a.first));
      const to = Math.max(...acks.map((a) => a.first + a.bodies.length));
      let records;
      try {
        records = await this.stepReader.read(stream, from, to - from);
      } catch {
        this.unverified.push(...acks);
        continue;
      }
      const at = new Map(records.map((r) => [r.offset, r.body]));
      for (const ack of acks) {
        ack.bodies.forEach((body, i) => {
          const found = at.get(ack.first + i);
          if (found !== body) {
            this.violate(
              `acknowledged ${body} (by ${ack.node} at epoch ${ack.epoch}) should be readable at ${stream}/${ack.first + i}, but ${found ?? 'nothing'} is`,
            );
          }
        });
      }
    }
  }

  /**
   * Once healed: every stream has exactly one owner serving it (no other node holds a writable
   * session of it), every node is back and Alive, and no pending transfer names a Dead node.
   */
  checkHealed(state: StreamMetadata, writableOn: (stream: string) => string[]): void {
    for (const node of [...state.nodes()]) {
      if ((node.liveness ?? 'Alive') !== 'Alive')
        this.violate(`${node.id} is ${node.liveness} after the heal`);
    }
    for (const transfer of [...state.transfers()]) {
      for (const end of [transfer.source, transfer.target]) {
        if (state.node(end)?.liveness === 'Dead')
          this.violate(`transfer of ${transfer.stream} names Dead ${end}`);
      }
    }
    for (const stream of [...state.streams()]) {
      const serving = writableOn(stream.id);
      if (serving.length !== 1 || serving[0] !== stream.owner)
        this.violate(`${stream.id} (owner ${stream.owner}) is writable on [${serving.join(', ')}]`);
    }
  }

  violate(message: string): void {
    this.violations.push(`t=${this.now()}: ${message}`);
  }

  recordAck(ack: Ack): void {
    this.acks.push(ack);
    this.unverified.push(ack);
    // In real time, one acknowledging node per stream: once a later epoch acknowledged, an
    // earlier epoch's owner (a zombie: paused, or cut off from the metadata) must never again.
    const latest = this.latestAck.get(ack.stream);
    if (latest && latest.epoch > ack.epoch) {
      this.violate(
        `${ack.node} acknowledged ${ack.stream} at epoch ${ack.epoch} after ${latest.node} acknowledged it at epoch ${latest.epoch}`,
      );
    } else this.latestAck.set(ack.stream, { epoch: ack.epoch, node: ack.node });
    const key = `${ack.stream}@${ack.epoch}`;
    const other = this.acceptedAt.get(key);
    if (other !== undefined && other !== ack.node) {
      this.violate(
        `two nodes accepted appends for ${ack.stream} at epoch ${ack.epoch}: ${other} and ${ack.node}`,
      );
    }
    this.acceptedAt.set(key, ack.node);
  }

  /**
   * A checker for one replica's applies, in its apply order. A restarted replica gets a new
   * checker. A replica's state can also jump forward without applies (a snapshot installed
   * from the leader), so what depends on the state just before an entry (the completion rule)
   * is checked once per log index, by the log's own order: on the first replica to apply it.
   * Every index is applied by someone (a snapshot is only taken of applied state), and first
   * applications come in index order, since each replica applies in order.
   */
  replica(
    name: string,
  ): (state: StreamMetadata, entry: AppliedEntry<StreamCommand, StreamResult>) => void {
    const epochs = new Map<string, number>();
    return (state, { position, command, result }) => {
      this.entriesChecked += 1;
      const applied = JSON.stringify({ command, result });
      const first = this.appliedAt.get(position.index);
      if (first === undefined) {
        this.appliedAt.set(position.index, applied);
        this.checkInLogOrder(state, command, result);
      } else if (first !== applied) {
        this.violate(
          `${name} applied ${applied} at index ${position.index}, another replica ${first}`,
        );
      }
      for (const stream of [...state.streams()]) {
        const before = epochs.get(stream.id) ?? 0;
        if (stream.epoch < before)
          this.violate(
            `${name}: epoch of ${stream.id} went back from ${before} to ${stream.epoch}`,
          );
        epochs.set(stream.id, stream.epoch);
        const key = `${stream.id}@${stream.epoch}`;
        const owner = this.ownerAt.get(key);
        if (owner !== undefined && owner !== stream.owner) {
          this.violate(
            `${stream.id} at epoch ${stream.epoch} had two owners: ${owner} and ${stream.owner}`,
          );
        }
        this.ownerAt.set(key, stream.owner);
      }
    };
  }

  /** The log's epochs of each stream after the last index first applied anywhere. */
  private readonly logEpochs = new Map<string, number>();

  /** A completion applies only at the epoch the stream had just before it, in the log. */
  private checkInLogOrder(
    state: StreamMetadata,
    command: StreamCommand,
    result: StreamResult,
  ): void {
    if (command.type === 'complete' && result.ok && !result.duplicate) {
      const before = this.logEpochs.get(command.stream);
      if (before !== command.epoch) {
        this.violate(
          `completion at epoch ${command.epoch} applied while the stream was at ${before}`,
        );
      }
    }
    for (const stream of [...state.streams()]) this.logEpochs.set(stream.id, stream.epoch);
  }

  /**
   * End to end, once healed: every acknowledged record is readable exactly once, in offset
   * order with no gaps, and each owner's tail matches what is stored.
   */
  async checkFinal(
    state: StreamMetadata,
    store: ObjectStore,
    tailOf: (stream: string, owner: string) => number | undefined,
  ): Promise<void> {
    const reader = new SegmentReader(store);
    const stored = new Map<string, string>();
    for (const stream of [...state.streams()]) {
      const records = await reader.read(stream.id, 0, 1_000_000);
      const seen = new Map<string, number>();
      records.forEach((record, i) => {
        if (record.offset !== i)
          this.violate(`${stream.id}: offset ${record.offset} at position ${i} (gap or disorder)`);
        if (seen.has(record.body)) {
          this.violate(
            `${stream.id}: ${record.body} stored twice (offsets ${seen.get(record.body)} and ${record.offset})`,
          );
        }
        seen.set(record.body, record.offset);
        stored.set(`${stream.id}/${record.offset}`, record.body);
      });
      const tail = tailOf(stream.id, stream.owner);
      if (tail !== records.length)
        this.violate(
          `${stream.id}: owner's tail is ${tail} but ${records.length} records are stored`,
        );
    }
    for (const ack of this.acks) {
      ack.bodies.forEach((body, i) => {
        const at = `${ack.stream}/${ack.first + i}`;
        const found = stored.get(at);
        if (found !== body)
          this.violate(`acknowledged ${body} at ${at}, but ${found ?? 'nothing'} is stored there`);
      });
    }
  }
}
