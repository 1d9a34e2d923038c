import { PreconditionFailedError, type ObjectStore } from '@baton/contracts';
import type { StreamId } from './model.js';
import type { BatchStamp } from './wal.js';

/**
 * Records live in the ObjectStore as segment objects, one per flush, keyed by the offset of
 * their first record: `streams/{stream}/segments/{first, 16 digits}`. A key names exactly one
 * batch of offsets, so re-flushing after a crash writes the same key (ifAbsent makes that a
 * no-op) and a listing of the prefix is already in offset order.
 *
 * The keys form one chain: each object names the next one (after a segment of n records at
 * offset f, the key of offset f + n). Every writer creates only the next key of the chain, with
 * `ifAbsent`, so two writers can never both extend it. That is what fences an old owner where
 * the data lives: a node taking a stream over writes a *fence* (a segment of no records, at its
 * own epoch) on the key the old owner would write next, and the old owner's next write meets it
 * and fails. A fence takes no offset; the key after a fence at offset f is the same offset with
 * the next slot (`{f}.{slot, 6 digits}`), which sorts after `{f}` and before `{f + 1}`.
 */
export interface SegmentRecord {
  body: string;
}

export interface Segment {
  stream: StreamId;
  /** The epoch of the session that wrote it. */
  epoch: number;
  first: number;
  records: SegmentRecord[];
  /** Producer batches in this segment, so dedup state can be rebuilt from the store if needed. */
  stamps?: BatchStamp[];
  /** A fence: written by a node taking the stream over; holds no records. */
  fence?: true;
}

export interface StoredRecord {
  offset: number;
  body: string;
}

const OFFSET_DIGITS = 16;
const SLOT_DIGITS = 6;
/** The largest slot: a million fences at one offset would take a million failovers there. */
export const MAX_SLOT = 999_999;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function segmentPrefix(stream: StreamId): string {
  return `streams/${stream}/segments/`;
}

/** The key of the segment at `first` in `slot` (0 unless fences were written at that offset). */
export function segmentKey(stream: StreamId, first: number, slot = 0): string {
  const offset = String(first).padStart(OFFSET_DIGITS, '0');
  return `${segmentPrefix(stream)}${offset}${slot === 0 ? '' : `.${String(slot).padStart(SLOT_DIGITS, '0')}`}`;
}

export function firstOffsetOf(key: string): number {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.indexOf('.');
  return Number(dot < 0 ? name : name.slice(0, dot));
}

export function slotOf(key: string): number {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.indexOf('.');
  return dot < 0 ? 0 : Number(name.slice(dot + 1));
}

/** Where the chain goes on after `segment`, stored in `slot`: the next offset, or the next slot of a fence's. */
export function nextInChain(segment: Segment, slot: number): { first: number; slot: number } {
  return segment.records.length > 0 ? { first: segment.first + segment.records.length, slot: 0 } : { first: segment.first, slot: slot + 1 };
}

/**
 * The writer met a segment of a later epoch (a fence or the records of the node that took the
 * stream over), or another writer's records where its own belong: it no longer owns the
 * stream's chain, and nothing it holds may be acknowledged.
 */
export class SegmentFencedError extends Error {
  constructor(
    readonly stream: StreamId,
    readonly key: string,
    readonly epoch: number,
    readonly byEpoch: number,
  ) {
    super(`stream ${stream} is fenced at ${key}: epoch ${epoch} met a segment of epoch ${byEpoch}; another node took the stream over`);
    this.name = 'SegmentFencedError';
  }
}

/**
 * Writes one segment durably at the next key of the chain, from `slot` on, and returns the slot
 * it landed in. If the key already exists:
 * - the same records of the same epoch: a flush retried after a crash or a lost answer; done;
 * - a fence of an earlier epoch (a takeover that then closed without writing): step over it to
 *   the next slot, where the chain goes on;
 * - anything else (a later epoch, or other records): SegmentFencedError; nothing is acknowledged.
 * On a store without conditional puts the write is a plain put and none of this is checked.
 */
export async function writeSegment(store: ObjectStore, segment: Segment, slot = 0): Promise<number> {
  const bytes = encoder.encode(JSON.stringify(segment));
  for (let at = slot; at <= MAX_SLOT; at++) {
    const key = segmentKey(segment.stream, segment.first, at);
    try {
      await store.put(key, bytes, store.supports.conditionalPut ? { ifAbsent: true } : undefined);
      return at;
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error;
    }
    const existing = await readSegment(store, key);
    if (!existing) throw new Error(`segment ${key} was refused as present but cannot be read back`);
    if (existing.epoch === segment.epoch && sameRecords(existing, segment)) return at;
    if (existing.epoch < segment.epoch && existing.records.length === 0) continue;
    throw new SegmentFencedError(segment.stream, key, segment.epoch, existing.epoch);
  }
  throw new Error(`stream ${segment.stream} has no free slot left at offset ${segment.first}`);
}

export async function readSegment(store: ObjectStore, key: string): Promise<Segment | undefined> {
  const bytes = await store.get(key);
  if (!bytes) return undefined;
  return JSON.parse(decoder.decode(bytes)) as Segment;
}

function sameRecords(a: Segment, b: Segment): boolean {
  return (
    a.first === b.first &&
    (a.fence ?? false) === (b.fence ?? false) &&
    a.records.length === b.records.length &&
    a.records.every((r, i) => r.body === b.records[i].body)
  );
}

/**
 * Reads a stream's durable records from the object store, by offset. Keeps the list of segment
 * first-offsets it has seen per stream and lists only past the last one, so a reader following
 * a stream does not relist from the start each time.
 */
export class SegmentReader {
  private readonly known = new Map<StreamId, SegmentIndex>();

  constructor(private readonly store: ObjectStore) {}

  async read(stream: StreamId, from: number, limit: number): Promise<StoredRecord[]> {
    const index = await this.refresh(stream);
    const out: StoredRecord[] = [];
    let i = lastAtOrBelow(index.firsts, from);
    if (i < 0) i = 0;
    for (; i < index.firsts.length && out.length < limit; i++) {
      const segment = await readSegment(this.store, index.keys[i]);
      if (!segment) continue;
      segment.records.forEach((record, k) => {
        const offset = segment.first + k;
        if (offset >= from && out.length < limit) out.push({ offset, body: record.body });
      });
    }
    return out;
  }

  /** Offset after the last durable record, as far as the object store shows. */
  async durableTail(stream: StreamId): Promise<number> {
    const index = await this.refresh(stream);
    const last = index.keys[index.keys.length - 1];
    if (last === undefined) return 0;
    const segment = await readSegment(this.store, last);
    return segment ? segment.first + segment.records.length : firstOffsetOf(last);
  }

  private readonly refreshing = new Map<StreamId, Promise<SegmentIndex>>();

  /** One listing per stream at a time: two concurrent ones would both append the same keys. */
  private refresh(stream: StreamId): Promise<SegmentIndex> {
    let running = this.refreshing.get(stream);
    if (!running) {
      running = this.listNewSegments(stream).finally(() => this.refreshing.delete(stream));
      this.refreshing.set(stream, running);
    }
    return running;
  }

  private async listNewSegments(stream: StreamId): Promise<SegmentIndex> {
    let index = this.known.get(stream);
    if (!index) {
      index = { firsts: [], keys: [] };
      this.known.set(stream, index);
    }
    for (;;) {
      const page = await this.store.list(segmentPrefix(stream), { startAfter: index.lastKey, limit: 1000 });
      for (const object of page.objects) {
        index.firsts.push(firstOffsetOf(object.key));
        index.keys.push(object.key);
        index.lastKey = object.key;
      }
      if (!page.next || page.objects.length === 0) return index;
    }
  }
}

/** The segment keys of one stream seen so far, in chain order, with their first offsets. */
interface SegmentIndex {
  firsts: number[];
  keys: string[];
  lastKey?: string;
}

/** Index of the greatest element <= value in a sorted array, or -1. */
function lastAtOrBelow(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] <= value) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
