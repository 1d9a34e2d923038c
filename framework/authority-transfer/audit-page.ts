import { z } from 'zod';
import { decimalQuery } from '@baton/http';
import type { AuditRecord, AuditStore } from '@baton/contracts';
import { auditRecordSchema, auditRecordViewSchema } from './api-schemas.js';
import { AUTHORITY_AUDIT_KINDS, type AuthorityAuditKind } from './authority-audit-kinds.js';
import { lossOf } from './failover-loss.js';

export { AUTHORITY_AUDIT_KINDS, type AuthorityAuditKind } from './authority-audit-kinds.js';

/** A page of an authority's audit holds this many records unless asked, and never more than the maximum. */
export const DEFAULT_AUDIT_PAGE = 100;
export const MAX_AUDIT_PAGE = 1_000;

/**
 * `?before=` is the `next` of the previous page (a commit index: only older records), so a
 * history of any length is read in bounded pages. Strict like every listing query: a misspelt
 * parameter is refused, not silently ignored.
 */
export const auditPageQuery = z
  .object({
    limit: decimalQuery('limit', (n) =>
      n
        .int('limit must be an integer')
        .min(1, 'limit must be >= 1')
        .max(MAX_AUDIT_PAGE, `limit must be <= ${MAX_AUDIT_PAGE}`),
    ).default(DEFAULT_AUDIT_PAGE),
    before: decimalQuery('before', (n) => n.int('before must be an integer').min(0, 'before must be >= 0')).optional(),
  })
  .strict();

/** `GET /availability/v1/authorities/{authority}/audit`: the records as stored, as a transfer's POST answers them. */
export const auditPageSchema = z.object({
  authority: z.string(),
  records: z.array(auditRecordSchema),
  /** The `before` of the next (older) page: the last record's commit_index, or null on the last page. */
  next: z.number().int().nullable(),
});

/** `GET /availability/v1/audit`: the records as the stream nodes' listing shows them (auditRecordView). */
export const auditListingSchema = auditPageSchema.extend({ records: z.array(auditRecordViewSchema) });

/**
 * `GET /availability/v1/audit`: the query the stream nodes' `/v1/admin/audit` takes, on an
 * authority's trail. One trail per authority, so `subject` (the authority) is required.
 */
export const auditQuery = z
  .object({
    subject: z.string({ error: 'subject: name the authority whose trail to read' }).min(1, 'subject: name the authority whose trail to read'),
    kind: z.enum(AUTHORITY_AUDIT_KINDS, { error: `kind must be one of ${AUTHORITY_AUDIT_KINDS.join(', ')}` }).optional(),
    limit: auditPageQuery.shape.limit,
    before: auditPageQuery.shape.before,
  })
  .strict();

/**
 * One page of an authority's trail, newest first: at most `limit` records below `before`, of
 * `kind` when given. Both audit routes page with it, so they page the same way.
 */
export async function authorityAuditPage(
  audit: AuditStore,
  authority: string,
  query: { limit: number; before?: number; kind?: AuthorityAuditKind },
): Promise<{ authority: string; records: AuditRecord[]; next: number | null }> {
  // One record more than asked tells whether an older page exists without a second call.
  const records = await audit.list(authority, { limit: query.limit + 1, ...(query.before === undefined ? {} : { before: query.before }) });
  const listed = records.slice(0, query.limit);
  // Records sealed before kinds existed are planned transfers.
  const page = listed.filter((r) => query.kind === undefined || (r.kind ?? 'planned_transfer') === query.kind);
  return { authority, records: page, next: records.length > query.limit ? listed[listed.length - 1].commit_index : null };
}

/** The page of `GET /availability/v1/audit`: each record with its view fields. */
export async function authorityAuditListing(
  audit: AuditStore,
  authority: string,
  query: { limit: number; before?: number; kind?: AuthorityAuditKind },
): Promise<z.output<typeof auditListingSchema>> {
  const page = await authorityAuditPage(audit, authority, query);
  return { ...page, records: page.records.map(auditRecordView) };
}

/** A record as the listings answer it: from/to/epoch_after named as on the stream nodes, a failover's loss parsed. */
export function auditRecordView(record: AuditRecord): z.output<typeof auditRecordViewSchema> {
  const loss = record.kind === 'failover_transfer' ? lossOf(record.evidence) : undefined;
  return {
    ...(record as z.output<typeof auditRecordViewSchema>),
    from: record.source || null,
    to: record.target,
    epoch_after: record.epoch,
    ...(loss ? { loss } : {}),
  };
}

const trailHead = z.object({ records: z.number().int().min(0), hash: z.string(), commit_index: z.number().int().min(0), seq: z.number().int().min(0) });

/** `GET /availability/v1/audit/chain?subject=`: what a verify checks an authority's stored trail against. */
export const auditChainQuery = z.object({ subject: auditQuery.shape.subject }).strict();

export const auditChainSchema = z.object({
  authority: z.string(),
  head: trailHead.nullable().describe("The newest record sealed on the authority's trail, as the replicated state holds it"),
  anchors: z.array(trailHead).describe('Every 64th head, the most recent kept'),
});
