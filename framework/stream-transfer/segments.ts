import { PreconditionFailedError, type ObjectStore } from '../contracts/object-store.js';
import type { StreamId } from './model.js';
import type { BatchStamp } from './wal.js';

/**
 * Records live in the ObjectStore as segment objects, one per flush, keyed by the offset of
 * their first record: `streams/{stream}/segments/{first, 16 digits}`. A key names exactly one
 * batch of offsets, so re-flushing after a crash writes the same key (ifAbsent makes that a
 * no-op) and a listing of the prefix is already in offset order.
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
}

export interface StoredRecord {
  offset: number;
  body: string;
}

const OFFSET_DIGITS = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function segmentPrefix(stream: StreamId): string {
  return `streams/${stream}/segments/`;
}

export function segmentKey(stream: StreamId, first: number): string {
  return `${segmentPrefix(stream)}${String(first).padStart(OFFSET_DIGITS, '0')}`;
}

export function firstOffsetOf(key: string): number {
  return Number(key.slice(key.lastIndexOf('/') + 1));
}

/**
 * Writes one segment durably. If the key already exists (a flush retried after a crash or a lost
 * answer), the stored segment must hold the same records; anything else means two writers
 * produced the same offsets, which the epoch rules forbid, so it is reported, not hidden.
 */
export async function writeSegment(store: ObjectStore, segment: Segment): Promise<void> {
  const key = segmentKey(segment.stream, segment.first);
  const bytes = encoder.encode(JSON.stringify(segment));
  try {
    await store.put(key, bytes, store.supports.conditionalPut ? { ifAbsent: true } : undefined);
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error;
    const existing = await readSegment(store, key);
    if (!existing || !sameRecords(existing, segment)) {
      throw new Error(
        `segment ${key} already exists with different records: two writers produced offset ${segment.first} of ${segment.stream}`,
      );
    }
  }
}

export async function readSegment(store: ObjectStore, key: string): Promise<Segment | undefined> {
  const bytes = await store.get(key);
  if (!bytes) return undefined;
  return JSON.parse(decoder.decode(bytes)) as Segment;
}

function sameRecords(a: Segment, b: Segment): boolean {
  return (
    a.first === b.first &&
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
  private readonly known = new Map<StreamId, { firsts: number[]; lastKey?: string }>();

  constructor(private readonly store: ObjectStore) {}

  async read(stream: StreamId, from: number, limit: number): Promise<StoredRecord[]> {
    const index = await this.refresh(stream);
    const out: StoredRecord[] = [];
    let i = lastAtOrBelow(index.firsts, from);
    if (i < 0) i = 0;
    for (; i < index.firsts.length && out.length < limit; i++) {
      const segment = await readSegment(this.store, segmentKey(stream, index.firsts[i]));
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
    const last = index.firsts[index.firsts.length - 1];
    if (last === undefined) return 0;
    const segment = await readSegment(this.store, segmentKey(stream, last));
    return segment ? segment.first + segment.records.length : last;
  }

  private readonly refreshing = new Map<StreamId, Promise<{ firsts: number[]; lastKey?: string }>>();

  /** One listing per stream at a time: two concurrent ones would both append the same keys. */
  private refresh(stream: StreamId): Promise<{ firsts: number[]; lastKey?: string }> {
    let running = this.refreshing.get(stream);
    if (!running) {
      running = this.listNewSegments(stream).finally(() => this.refreshing.delete(stream));
      this.refreshing.set(stream, running);
    }
    return running;
  }

  private async listNewSegments(stream: StreamId): Promise<{ firsts: number[]; lastKey?: string }> {
    let index = this.known.get(stream);
    if (!index) {
      index = { firsts: [] };
      this.known.set(stream, index);
    }
    for (;;) {
      const page = await this.store.list(segmentPrefix(stream), { startAfter: index.lastKey, limit: 1000 });
      for (const object of page.objects) {
        index.firsts.push(firstOffsetOf(object.key));
        index.lastKey = object.key;
      }
      if (!page.next || page.objects.length === 0) return index;
    }
  }
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
