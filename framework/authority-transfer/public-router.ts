import Router from '@koa/router';
import { z } from 'zod';
import type { IdentitySupplier } from '../contracts/identity-supplier.js';
import { requireScope } from '../http/auth.js';
import { readValidBody } from '../http/json-body.js';
import { validate } from '../http/validate.js';
import type { ChangeFeed } from './change-feed.js';
import type { WriteFence } from './write-fence.js';
import { OwnershipUnavailableError } from './transfer-errors.js';

/** Peers present this scope to read each other's feeds. */
export const PEER_SCOPE = 'peer';
/** Clients present this scope to write to an authority. */
export const AUTHORITY_WRITE_SCOPE = 'authority:write';

const feedQuery = z.object({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
});

const writeBody = z
  .object({
    operation: z.string().min(1, 'name the operation'),
    epoch: z.number().int().min(1, 'the epoch the write was issued under'),
  })
  .strict();

export interface PublicRouterDeps {
  feed: ChangeFeed;
  identity: IdentitySupplier;
  /** Present in mode ha: writes are fenced by the ownership consensus. */
  fence?: WriteFence;
}

/**
 * The public server every roster address names: peer traffic (change feeds and the applied
 * serial a barrier probe reads) and fenced writes to authorities.
 */
export function createPublicRouter(deps: PublicRouterDeps): Router {
  const router = new Router({ prefix: '/availability/v1' });

  router.get('/feed', requireScope(PEER_SCOPE), async (ctx) => {
    const { after, limit } = validate(feedQuery, ctx.query, 'query');
    const { entries, truncated } = deps.feed.read(after, limit);
    ctx.body = { member: deps.feed.self, serial: deps.feed.serial(), entries, truncated };
  });

  router.get('/feeds/:origin/applied', requireScope(PEER_SCOPE), async (ctx) => {
    const origin = ctx.params.origin;
    ctx.body = { member: deps.feed.self, origin, serial: deps.feed.appliedSerial(origin) };
  });

  router.post('/authorities/:authority/writes', requireScope(AUTHORITY_WRITE_SCOPE), async (ctx) => {
    if (!deps.fence) {
      throw new OwnershipUnavailableError('this node runs in mode dc: fenced writes need the ownership consensus of mode ha');
    }
    const authority = deps.identity.authority(ctx.params.authority);
    const body = await readValidBody(ctx, writeBody);
    const entry = await deps.fence.write(authority, body.epoch, body.operation);
    ctx.body = { authority, epoch: entry.epoch, serial: entry.serial };
  });

  return router;
}
