import { z } from 'zod';
import { pageLimit } from './listing.js';

export { MOVES_SHOWN, planPreview, rebalancePage } from './rebalance-preview.js';
export type { PlanNodeEffect, PlanPreview, QueuedMove, RebalancePage } from './rebalance-preview.js';

/** `?after=` is the plan position (0-based) of the last move of the previous page. */
export const rebalancePageQuery = z
  .object({
    after: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.string().regex(/^\d{1,15}$/, 'after must be the next cursor of the previous page (a plan position)').optional(),
    ),
    limit: pageLimit,
  })
  .strict();

