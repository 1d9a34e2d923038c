import { PreconditionFailedError, type ObjectStore } from '@baton/contracts';
import type { ProducerMark, StreamId } from './model.js';
import { ProducerMarks } from './producer-marks.js';
import {
  MAX_SLOT,
  nextInChain,
  readSegment,
  segmentKey,
  segmentPrefix,
  SegmentFencedError,
  slotOf,
  type Segment,
} from './segments.js';

/** Where a taken-over stream's chain ended, and what the new owner starts from. */
export interface ClaimedTail {
  /** Offset the next record gets: every record the old owner stored is below it. */
  tail: number;
  /** The slot of the next segment at `tail` (the one after the fence). */
  slot: number;
  /** Producer marks with the old owner's stored batches applied, so dedup survives the takeover. */
  producers: Record<string, ProducerMark>;
  /** Segments read past the recorded tail (the old owner's unrecorded work). */
  segmentsRead: number;
}

const encoder = new TextEncoder();

/**
 * Takes a stream's chain over without the old owner's help (failover): walks the stored
 * segments from the recorded tail to the end of the chain, applying their producer stamps, and
 * writes a fence of `epoch` on the next key with `ifAbsent`. If the old owner wins the race for
 * that key, its segment is read like the others and the fence goes on the key after it. Once the
 * fence is stored the old owner cannot store anything more (its next key is taken), so every
 * record it ever acknowledged is below `tail`, and the new owner may serve.
 *
 * Idempotent: a claim repeated at the same epoch (the new owner restarted before it logged its
 * session) finds its own fence at the end of the chain and stops there. Meeting a later epoch's
 * segment means yet another node took the stream over: SegmentFencedError.
 */
export async function claimStreamTail(
  store: ObjectStore,
  stream: StreamId,
  epoch: number,
  recorded: { tail: number; producers: Record<string, ProducerMark> },
  maxProducers: number,
): Promise<ClaimedTail> {
  const producers = new ProducerMarks(recorded.producers, maxProducers);
  let end = { first: recorded.tail, slot: 0 };
  let last: { segment: Segment; key: string } | undefined;
  let startAfter = recorded.tail === 0 ? undefined : segmentKey(stream, recorded.tail - 1, MAX_SLOT);
  let segmentsRead = 0;
  for (;;) {
    for (;;) {
      const page = await store.list(segmentPrefix(stream), { startAfter, limit: 1000 });
      for (const object of page.objects) {
        const segment = await readSegment(store, object.key);
        if (!segment) continue;
        if (segment.epoch > epoch) throw new SegmentFencedError(stream, object.key, epoch, segment.epoch);
        segmentsRead += 1;
        for (const stamp of segment.stamps ?? []) {
          producers.set(stamp.id, { seq: stamp.seq, first: stamp.first, count: stamp.count });
        }
        end = nextInChain(segment, slotOf(object.key));
        last = { segment, key: object.key };
        startAfter = object.key;
      }
      if (!page.next || page.objects.length === 0) break;
    }
    if (last && last.segment.epoch === epoch && last.segment.fence) break;
    const fence: Segment = { stream, epoch, first: end.first, records: [], fence: true };
    try {
      const key = segmentKey(stream, end.first, end.slot);
      await store.put(key, encoder.encode(JSON.stringify(fence)), store.supports.conditionalPut ? { ifAbsent: true } : undefined);
      last = { segment: fence, key };
      end = nextInChain(fence, end.slot);
      break;
    } catch (error) {
      // The old owner (or a claim of our own whose answer was lost) got there first: read on.
      if (!(error instanceof PreconditionFailedError)) throw error;
    }
  }
  return { tail: end.first, slot: end.slot, producers: producers.toRecord(), segmentsRead };
}
