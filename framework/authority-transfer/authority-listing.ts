import { z } from 'zod';
import { decimalQuery } from '@baton/http';
import { keysAfter } from '@baton/consensus';
import type { Ownership, OwnershipState } from './ownership.js';
import type { CatchUpView } from './catch-up-view.js';
import { ownershipSchema } from './api-schemas.js';

/** A page holds this many authorities when the caller does not say, and never more than the maximum. */
export const DEFAULT_AUTHORITY_PAGE = 100;
export const MAX_AUTHORITY_PAGE = 1_000;

/** `?after=` is the last authority of the previous page; `limit` is bounded like every listing. */
export const authorityPageQuery = z
  .object({
    after: z.preprocess((value) => (value === '' ? undefined : value), z.string().max(1024, 'after must be the next cursor of the previous page').optional()),
    limit: decimalQuery('limit', (n) =>
      n
        .int('limit must be an integer')
        .min(1, 'limit must be >= 1')
        .max(MAX_AUTHORITY_PAGE, `limit must be <= ${MAX_AUTHORITY_PAGE}`),
    ).default(DEFAULT_AUTHORITY_PAGE),
  })
  .strict();

export const authorityPageSchema = z.object({
  authorities: z.array(ownershipSchema),
  /** The `after` of the next page, or null on the last. */
  next: z.string().nullable(),
  total: z.number().int().min(0),
});

export type AuthorityPage = z.infer<typeof authorityPageSchema>;

/**
 * Authorities by id strictly after `after`: O(log n + limit), whatever the number of authorities.
 * `catchUpOf` reads each listed record's catch-up against this member's replicas (bounded work).
 */
export function authorityPage(state: OwnershipState, after: string | undefined, limit: number, catchUpOf: (ownership: Ownership) => CatchUpView): AuthorityPage {
  const authorities: AuthorityPage['authorities'] = [];
  for (const authority of keysAfter(state.authorities, after)) {
    if (authorities.length === limit) return { authorities, next: authorities[authorities.length - 1].authority, total: state.authorities.size };
    const ownership = state.authorities.get(authority)!;
    authorities.push({ authority, home: ownership.home, epoch: ownership.epoch, catch_up: catchUpOf(ownership) });
  }
  return { authorities, next: null, total: state.authorities.size };
}
