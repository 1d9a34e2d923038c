import type { OperationLog, OperationRecord } from '../operation-log.js';

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
 * - one node acknowledges per (stream, epoch), and epochs only grow: an acknowledgement that
 *   completed before another was invoked has a lower or equal epoch and lower offsets;
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
    // Sorted by completion: for each ack, every ack that completed before it was invoked must be behind it.
    const byCompletion = [...list].sort((a, b) => a.completeSeq! - b.completeSeq!);
    for (const later of list) {
      for (const earlier of byCompletion) {
        if (earlier.completeSeq! >= later.invokeSeq) break;
        if (earlier.output!.epoch > later.output!.epoch) {
          problems.push(
            `${stream}: epoch went back from ${earlier.output!.epoch} (${earlier.output!.node}) to ${later.output!.epoch} (${later.output!.node})`,
          );
        }
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
