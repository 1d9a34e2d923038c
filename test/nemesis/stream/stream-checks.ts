import type { OperationLog, OperationRecord } from '../operation-log.js';
import type { PendingTransferView } from './stream-admin.js';
import type { FailoverEvent } from './stream-faults.js';

export interface AppendInput {
  stream: string;
  producer: string;
  seq: number;
  bodies: string[];
  /** The node the attempt was sent to. */
  node: string;
}

export interface AppendOutput {
  epoch: number;
  offsets: number[];
  /** The node that acknowledged. */
  node: string;
  duplicate: boolean;
}

/** A stream as read back after healing, from offset 0. */
export type StreamRead = Array<{ offset: number; body: string }>;

/**
 * The stream invariants over one run's history and what was read back after healing:
 * - every acknowledged batch is in its stream at the offsets it was acknowledged with, in order;
 * - every record appears once; none appears that no attempt could have written (every attempt
 *   of its batch was refused);
 * - a producer's batches appear in the order of their sequence numbers;
 * - offsets run from 0 without a gap;
 * - one node acknowledges per (stream, epoch), and epochs strictly increase along the stream:
 *   every record of a lower epoch sits below every record of a higher one;
 * - one node acknowledges per stream at a time: no acknowledgement at an old epoch (an old
 *   owner's) is invoked after the first acknowledgement at a newer one completed, and an
 *   acknowledgement that completed before another was invoked has lower offsets;
 * - the healed view's epoch of a stream is at least every epoch acknowledged on it.
 */
export function checkStreamHistory(
  log: OperationLog,
  reads: Record<string, StreamRead>,
  views: Record<string, { owner: string; epoch: number }> | undefined,
): string[] {
  const problems: string[] = [];
  const appends = log.of<AppendInput, AppendOutput>('append');
  const acked = appends.filter((r) => r.outcome === 'ok');
  const batchKey = (i: AppendInput) => `${i.stream}|${i.producer}|${i.seq}`;
  const attempts = new Map<string, Array<OperationRecord<AppendInput, AppendOutput>>>();
  for (const r of appends)
    attempts.set(batchKey(r.input), [...(attempts.get(batchKey(r.input)) ?? []), r]);

  for (const [stream, records] of Object.entries(reads)) {
    records.forEach((record, i) => {
      if (record.offset !== i)
        problems.push(
          `${stream}: offset ${record.offset} read at position ${i} (a gap or a repeat)`,
        );
    });
    const seen = new Map<string, number>();
    for (const record of records) {
      if (seen.has(record.body))
        problems.push(
          `${stream}: record ${record.body} appears twice, at offsets ${seen.get(record.body)} and ${record.offset}`,
        );
      seen.set(record.body, record.offset);
      const [producer, s, seq] = record.body.split('/');
      const tried = attempts.get(`${s}|${producer}|${seq}`) ?? [];
      if (s !== stream) problems.push(`${stream}: record ${record.body} belongs to stream ${s}`);
      else if (tried.length === 0)
        problems.push(
          `${stream}: record ${record.body} at offset ${record.offset} was never appended`,
        );
      else if (tried.every((a) => a.outcome === 'fail')) {
        problems.push(
          `${stream}: record ${record.body} at offset ${record.offset} appeared although every attempt was refused (${tried.map((a) => a.detail).join('; ')})`,
        );
      }
    }
    // A producer's batches in seq order.
    const lastSeq = new Map<string, number>();
    for (const record of records) {
      const [producer, , seq, index] = record.body.split('/');
      if (index !== '0') continue;
      const previous = lastSeq.get(producer);
      if (previous !== undefined && Number(seq) <= previous)
        problems.push(
          `${stream}: producer ${producer}'s batch ${seq} comes after its batch ${previous}`,
        );
      lastSeq.set(producer, Number(seq));
    }
  }

  for (const r of acked) {
    const read = reads[r.input.stream];
    if (!read) continue;
    r.input.bodies.forEach((body, i) => {
      const offset = r.output!.offsets[i];
      const found = read[offset];
      if (found?.body !== body) {
        problems.push(
          `${r.input.stream}: acknowledged record ${body} (epoch ${r.output!.epoch} on ${r.output!.node}) is not at its offset ${offset}: found ${found ? found.body : 'nothing'}`,
        );
      }
    });
  }

  const fresh = acked.filter((r) => !r.output!.duplicate);
  const ackedBy = new Map<string, string>();
  for (const r of fresh) {
    const key = `${r.input.stream}@${r.output!.epoch}`;
    const node = ackedBy.get(key);
    if (node !== undefined && node !== r.output!.node)
      problems.push(
        `${r.input.stream}: epoch ${r.output!.epoch} acknowledged by both ${node} and ${r.output!.node}`,
      );
    ackedBy.set(key, r.output!.node);
  }
  const byStream = new Map<string, typeof fresh>();
  for (const r of fresh) byStream.set(r.input.stream, [...(byStream.get(r.input.stream) ?? []), r]);
  for (const [stream, list] of byStream) {
    // Epoch order is offset order: the lowest and highest offset acknowledged at each epoch.
    const spans = new Map<number, { low: number; high: number; node: string }>();
    for (const r of list) {
      const span = spans.get(r.output!.epoch) ?? {
        low: Infinity,
        high: -Infinity,
        node: r.output!.node,
      };
      span.low = Math.min(span.low, ...r.output!.offsets);
      span.high = Math.max(span.high, ...r.output!.offsets);
      spans.set(r.output!.epoch, span);
    }
    const epochs = [...spans.keys()].sort((a, b) => a - b);
    for (let i = 1; i < epochs.length; i++) {
      const older = spans.get(epochs[i - 1])!;
      const newer = spans.get(epochs[i])!;
      if (older.high >= newer.low)
        problems.push(
          `${stream}: epoch ${epochs[i - 1]} (${older.node}) acknowledged offset ${older.high}, at or above offset ${newer.low} of the later epoch ${epochs[i]} (${newer.node}): epochs do not increase along the stream`,
        );
    }
    // The first acknowledgement at each epoch: after it, no older epoch may acknowledge.
    const firstAck = new Map<number, (typeof list)[number]>();
    for (const r of list) {
      const first = firstAck.get(r.output!.epoch);
      if (!first || r.completeSeq! < first.completeSeq!) firstAck.set(r.output!.epoch, r);
    }
    for (const r of list) {
      for (const [epoch, first] of firstAck) {
        if (epoch > r.output!.epoch && first.completeSeq! < r.invokeSeq)
          problems.push(
            `${stream}: old owner ${r.output!.node} acknowledged batch ${r.input.producer}/${r.input.seq} at epoch ${r.output!.epoch}, invoked after new owner ${first.output!.node}'s first acknowledgement at epoch ${epoch}`,
          );
      }
    }
    // Sorted by completion: for each ack, every ack that completed before it was invoked must be behind it.
    const byCompletion = [...list].sort((a, b) => a.completeSeq! - b.completeSeq!);
    for (const later of list) {
      for (const earlier of byCompletion) {
        if (earlier.completeSeq! >= later.invokeSeq) break;
        if (Math.max(...earlier.output!.offsets) >= Math.min(...later.output!.offsets)) {
          problems.push(
            `${stream}: batch ${later.input.producer}/${later.input.seq} acknowledged at offset ${later.output!.offsets[0]}, not after the earlier acknowledged offset ${Math.max(...earlier.output!.offsets)}`,
          );
        }
      }
    }
    const view = views?.[stream];
    const top = Math.max(...list.map((r) => r.output!.epoch));
    if (view && view.epoch < top)
      problems.push(
        `${stream}: the healed view is at epoch ${view.epoch}, below the acknowledged epoch ${top}`,
      );
  }
  return dedupe(problems);
}

function dedupe(problems: string[]): string[] {
  return [...new Set(problems)];
}

/**
 * The pending transfers around one liveness read, all linearizable reads at one node, in this
 * order: a transfer in both listings (same stream and `since`) was pending when the liveness
 * was read.
 */
export interface TransferSample {
  at: string;
  before: PendingTransferView[];
  liveness: Record<string, string>;
  after: PendingTransferView[];
}

/** No pending transfer names a Dead target: a node turning Dead gives up the transfers to it. */
export function checkTransferSamples(samples: readonly TransferSample[]): string[] {
  const problems: string[] = [];
  const id = (t: PendingTransferView) => `${t.stream}@${t.since}`;
  for (const sample of samples) {
    const later = new Set(sample.after.map(id));
    for (const t of sample.before) {
      if (later.has(id(t)) && sample.liveness[t.target] === 'Dead')
        problems.push(
          `transfer of ${t.stream} from ${t.source} to ${t.target} (since ${t.since}) was pending while ${t.target} was Dead (read at ${sample.at})`,
        );
    }
  }
  return dedupe(problems);
}

/** Every node killed for a failover had its streams failed over while it was down. */
export function checkFailovers(events: readonly FailoverEvent[]): string[] {
  return events
    .filter((e) => e.movedAt === undefined && e.stuck?.startsWith('still owned'))
    .map(
      (e) =>
        `${e.trigger} failover of ${e.node} (killed at ${(e.killedAt / 1000).toFixed(1)} s, owner of ${e.streams.join(', ')}): ${e.stuck}`,
    );
}

/**
 * How long failovers took: from the kill to the metadata naming new owners for every stream of
 * the node (`moved`), and to the first append acknowledged by another node on each of them
 * (`served`, the slowest of its streams).
 */
export function failoverTimes(
  log: OperationLog,
  events: readonly FailoverEvent[],
): { moved: number[]; served: number[] } {
  const acked = log.of<AppendInput, AppendOutput>('append').filter((r) => r.outcome === 'ok');
  const moved: number[] = [];
  const served: number[] = [];
  for (const e of events) {
    if (e.movedAt === undefined || e.streams.length === 0) continue;
    moved.push(Math.round(e.movedAt - e.killedAt));
    const firsts = e.streams.map((stream) =>
      acked
        .filter(
          (r) =>
            r.input.stream === stream && r.invokedAt >= e.killedAt && r.output!.node !== e.node,
        )
        .reduce((best, r) => Math.min(best, r.completedAt!), Infinity),
    );
    const slowest = Math.max(...firsts);
    if (Number.isFinite(slowest)) served.push(Math.round(slowest - e.killedAt));
  }
  return { moved, served };
}
