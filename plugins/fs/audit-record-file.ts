import { z } from 'zod';
import type { AuditRecord } from '@baton/contracts';

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
  })
  .strip();

/** On disk: a versioned envelope, so a later format can tell old files apart. */
const recordFileSchema = z.object({ format: z.literal(1), record: auditRecordSchema }).strict();

/** Where a transfer id's record lives: the pointer file of the id index. */
export interface RecordPosition {
  authority: string;
  commit_index: number;
}
const positionFileSchema = z
  .object({ format: z.literal(1), id: z.string(), authority: z.string(), commit_index: count })
  .strict();

export function recordFileText(record: AuditRecord): string {
  return `${JSON.stringify({ format: 1, record: auditRecordSchema.parse(record) })}\n`;
}

export function positionFileText(id: string, position: RecordPosition): string {
  return `${JSON.stringify({ format: 1, id, authority: position.authority, commit_index: position.commit_index })}\n`;
}

/** The record in a file's text; throws an Error saying what is wrong when it is not one. */
export function parseRecordFile(text: string): AuditRecord {
  return recordFileSchema.parse(JSON.parse(text)).record;
}

export function parsePositionFile(text: string): { id: string } & RecordPosition {
  return positionFileSchema.parse(JSON.parse(text));
}

/** The names of the fields in which two records differ (empty when they are identical). */
export function differingFields(a: AuditRecord, b: AuditRecord): string[] {
  return (Object.keys(auditRecordSchema.shape) as (keyof AuditRecord)[]).filter((f) => a[f] !== b[f]);
}

/**
 * A record's file name within its authority's directory: the commit index, zero-padded to the
 * width of the largest safe integer, so names sort as the indexes do.
 */
export function recordFileName(commitIndex: number): string {
  return `${String(commitIndex).padStart(16, '0')}.json`;
}

export function commitIndexOfFileName(name: string): number | undefined {
  const match = /^(\d{16})\.json$/.exec(name);
  return match ? Number(match[1]) : undefined;
}
