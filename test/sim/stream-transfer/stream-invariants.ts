import type { AppliedEntry } from '../../../framework/contracts/metadata-consensus.js';
import type { ObjectStore } from '../../../framework/contracts/object-store.js';
import type { StreamCommand, StreamResult } from '../../../framework/stream-transfer/commands.js';
import type { StreamMetadata } from '../../../framework/stream-transfer/model.js';
import { SegmentReader } from '../../../framework/stream-transfer/segments.js';

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

  constructor(private readonly now: () => number) {}

  violate(message: string): void {
    this.violations.push(`t=${this.now()}: ${message}`);
  }

  recordAck(ack: Ack): void {
    this.acks.push(ack);
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
