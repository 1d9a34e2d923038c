import { z } from 'zod';
import type { AuditRecord, AuditStore } from '@baton/contracts';
import { decimalQuery, problems } from '@baton/http';
import { CLUSTER_SUBJECT, STREAM_AUDIT_KINDS, STREAM_AUDIT_TRAIL } from './audit-trail.js';
import { ID_PATTERN } from './model.js';
import type { StreamMetadata } from './stream-metadata.js';

/** A page holds this many records when the caller does not say, and never more than the maximum. */
export const DEFAULT_AUDIT_PAGE = 100;
export const MAX_AUDIT_PAGE = 1_000;
/**
 * A filtered page reads at most this many records of the trail: a filter that matches little
 * answers a short page and its `next`, and the caller reads on, instead of one request walking
 * the whole history.
 */
export const AUDIT_SCAN_BUDGET = 5_000;
/** Records read from the store per call while filling a page. */
const STORE_BATCH = 500;

/** A record id (`<commit_index>-<seq>`) as the cursor of the next page: only older records. */
const RECORD_ID = /^(\d{1,16})-(\d{1,16})$/;

export const auditPageQuery = z
  .object({
    subject: z.string().regex(ID_PATTERN, 'subject must be a stream id, a node id or "cluster"').optional(),
    kind: z.enum(STREAM_AUDIT_KINDS, { error: `kind must be one of ${STREAM_AUDIT_KINDS.join(', ')}` }).optional(),
    before: z
      .string()
      .regex(RECORD_ID, 'before must be the next of the previous page (a record id, <commit_index>-<seq>)')
      .optional(),
    limit: decimalQuery('limit', (n) =>
      n
        .int('limit must be an integer')
        .min(1, 'limit must be >= 1')
        .max(MAX_AUDIT_PAGE, `limit must be <= ${MAX_AUDIT_PAGE}`),
    ).default(DEFAULT_AUDIT_PAGE),
  })
  .strict();

export type AuditPageQuery = z.output<typeof auditPageQuery>;

/** A record as the admin API answers it: the stored record, with its from/to/epoch_after named so. */
export type AuditRecordView = AuditRecord & { from: string | null; to: string | null; epoch_after: number };

export function auditRecordView(record: AuditRecord): AuditRecordView {
  return { ...record, from: record.source || null, to: record.target || null, epoch_after: record.epoch };
}

/**
 * A subject filter must name something the cluster knows: a misspelt stream id answers 400
 * rather than an empty history that looks like "nothing ever happened to it".
 */
export function checkSubject(state: StreamMetadata, subject: string | undefined): void {
  if (subject === undefined || subject === CLUSTER_SUBJECT) return;
  if (state.stream(subject) || state.node(subject)) return;
  throw problems.badRequest(`subject ${subject} is no stream or node of this cluster (nor "${CLUSTER_SUBJECT}")`, { subject });
}

/**
 * One page of the trail, newest first, read from this member's audit store: the records that
 * match the filters, at most `limit`, reading at most AUDIT_SCAN_BUDGET records. `next` is the
 * `before` of the following page (null once the trail is read to its start).
 */
export async function auditPage(store: AuditStore, query: AuditPageQuery): Promise<{ records: AuditRecordView[]; next: string | null }> {
  const match = (record: AuditRecord) =>
    (query.subject === undefined || record.subject === query.subject) && (query.kind === undefined || record.kind === query.kind);
  const position = query.before ? RECORD_ID.exec(query.before)! : undefined;
  let cursor = position ? { before: Number(position[1]), beforeSeq: Number(position[2]) } : undefined;
  const records: AuditRecordView[] = [];
  const unfiltered = query.subject === undefined && query.kind === undefined;
  const cursorId = () => `${cursor!.before}-${cursor!.beforeSeq}`;
  let scanned = 0;
  for (;;) {
    const ask = Math.min(unfiltered ? query.limit - records.length : STORE_BATCH, AUDIT_SCAN_BUDGET - scanned);
    const batch = await store.list(STREAM_AUDIT_TRAIL, { limit: ask, ...cursor });
    for (const record of batch) {
      scanned += 1;
      cursor = { before: record.commit_index, beforeSeq: record.seq ?? 0 };
      if (match(record)) records.push(auditRecordView(record));
      if (records.length === query.limit) return { records, next: cursorId() };
    }
    // A short batch: the trail is read to its first record.
    if (batch.length < ask) return { records, next: null };
    if (scanned >= AUDIT_SCAN_BUDGET) return { records, next: cursorId() };
  }
}
