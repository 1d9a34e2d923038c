import { z } from 'zod';
import { copyAuditRecord, type AuditRecord } from '@baton/contracts';

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** The audit record as the contract defines it; what a put must pass and a read must find. */
export const auditRecordSchema = z
  .object({
    id: z.string(),
    authority: z.string(),
    source: z.string(),
    target: z.string(),
    actor: z.string(),
    reason: z.string(),
    barrier: count,
    epoch: count,
    commit_term: count,
    commit_index: count,
    seq: count.optional(),
    epoch_before: count.optional(),
    time: count.optional(),
    kind: z.string().optional(),
    subject_type: z.string().optional(),
    subject: z.string().optional(),
    cause: z.string().optional(),
    evidence: z.string().optional(),
    prev_hash: z.string().optional(),
    hash: z.string().optional(),
  })
  .strip();

/** On disk: a versioned envelope, so a later format can tell old files apart. */
const recordFileSchema = z.object({ format: z.literal(1), record: auditRecordSchema }).strict();

/** Where a transfer id's record lives: the pointer file of the id index. */
export interface RecordPosition {
  authority: string;
  commit_index: number;
  seq?: number;
}
const positionFileSchema = z
  .object({ format: z.literal(1), id: z.string(), authority: z.string(), commit_index: count, seq: count.optional() })
  .strict();

export function recordFileText(record: AuditRecord): string {
  return `${JSON.stringify({ format: 1, record: copyAuditRecord(auditRecordSchema.parse(record)) })}\n`;
}

export function positionFileText(id: string, position: RecordPosition): string {
  const seq = position.seq ? { seq: position.seq } : {};
  return `${JSON.stringify({ format: 1, id, authority: position.authority, commit_index: position.commit_index, ...seq })}\n`;
}

/** The record in a file's text; throws an Error saying what is wrong when it is not one. */
export function parseRecordFile(text: string): AuditRecord {
  return copyAuditRecord(recordFileSchema.parse(JSON.parse(text)).record as AuditRecord);
}

export function parsePositionFile(text: string): { id: string } & RecordPosition {
  return positionFileSchema.parse(JSON.parse(text));
}

/** The names of the fields in which two records differ (empty when they are identical). */
export { differingAuditFields as differingFields } from '@baton/contracts';

/**
 * A record's file name within its authority's directory: the commit index, zero-padded to the
 * width of the largest safe integer, so names sort as the indexes do; a record after the first
 * one its entry sealed (seq > 0) adds its seq (`<index>-<seq>.json`).
 */
export function recordFileName(commitIndex: number, seq = 0): string {
  const index = String(commitIndex).padStart(16, '0');
  return seq > 0 ? `${index}-${seq}.json` : `${index}.json`;
}

/** The position a record file name stands for, or undefined when the name is not one. */
export function positionOfFileName(name: string): { commit_index: number; seq: number } | undefined {
  const match = /^(\d{16})(?:-([1-9]\d{0,15}))?\.json$/.exec(name);
  return match ? { commit_index: Number(match[1]), seq: match[2] ? Number(match[2]) : 0 } : undefined;
}
