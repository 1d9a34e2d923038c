import { z } from 'zod';
import { decimalQuery } from '@baton/http';
import { auditRecordSchema } from './api-schemas.js';

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

export const auditPageSchema = z.object({
  authority: z.string(),
  records: z.array(auditRecordSchema),
  /** The `before` of the next (older) page: the last record's commit_index, or null on the last page. */
  next: z.number().int().nullable(),
});
