import Router from '@koa/router';
import { z } from 'zod';
import type { IdentitySupplier } from '../contracts/identity-supplier.js';
import { requireScope } from '../http/auth.js';
import { idempotencyKey } from '../http/idempotency-key.js';
import { readValidBody } from '../http/json-body.js';
import { problems } from '../http/problem.js';
import { principalOf } from '../http/state.js';
import type { OwnershipConsensus } from './audit-projection.js';
import type { FailoverCommands } from './failover-command.js';
import type { MemberTracker } from './member-tracker.js';
import type { PlannedTransferEngine } from './planned-transfer-engine.js';
import { OwnershipUnavailableError } from './transfer-errors.js';

/** Scopes of the control listener. */
export const ADMIN_WRITE_SCOPE = 'admin:write';
export const ADMIN_READ_SCOPE = 'admin:read';

const transferBody = z
  .object({
    authority: z.string().min(1, 'name the authority to move'),
    source: z.string().min(1, 'name the datacenter the authority lives in'),
    target: z.string().min(1, 'name the datacenter to move it to'),
    reason: z.string().max(1024, 'keep the reason under 1024 characters'),
  })
  .strict();

const commandBody = z
  .object({
    type: z.literal('transfer_authority'),
    authority: z.string().min(1),
    target: z.string().min(1),
    source: z.string().min(1).optional(),
  })
  .strict();

/** What the control listener serves; absent consensus pieces mean mode dc. */
export interface ControlRouterDeps {
  identity: IdentitySupplier;
  tracker: MemberTracker;
  /** Present in mode ha only. */
  ha?: { engine: PlannedTransferEngine; failover: FailoverCommands; consensus: OwnershipConsensus };
}

/**
 * The availability control listener (its own port): planned transfers, the raw command, the
 * member tracker and ownership reads. In mode dc there is no ownership consensus and every
 * transfer request answers 503.
 */
export function createControlRouter(deps: ControlRouterDeps): Router {
  const router = new Router({ prefix: '/availability/v1' });
  const ha = () => {
    if (!deps.ha) {
      throw new OwnershipUnavailableError(
        'this node runs in mode dc, which has no ownership consensus: send transfer requests to a node in mode ha',
      );
    }
    return deps.ha;
  };

  router.post('/transfers', requireScope(ADMIN_WRITE_SCOPE), async (ctx) => {
    const { engine } = ha();
    const id = idempotencyKey(ctx, deps.identity);
    const body = await readValidBody(ctx, transferBody);
    const authority = deps.identity.authority(body.authority);
    const record = await engine.start({
      id,
      authority,
      source: body.source,
      target: body.target,
      reason: body.reason,
      actor: principalOf(ctx).name,
    });
    ctx.status = 200;
    ctx.body = record;
  });

  router.delete('/transfers/:authority', requireScope(ADMIN_WRITE_SCOPE), async (ctx) => {
    const { engine } = ha();
    await engine.cancel(deps.identity.authority(ctx.params.authority));
    ctx.status = 204;
  });

  router.get('/transfers/:authority', requireScope(ADMIN_READ_SCOPE), async (ctx) => {
    const { engine } = ha();
    const authority = deps.identity.authority(ctx.params.authority);
    const status = engine.status(authority);
    if (!status) throw problems.notFound(`no transfer of ${authority} is in flight`, { authority });
    ctx.body = status;
  });

  router.post('/commands', requireScope(ADMIN_WRITE_SCOPE), async (ctx) => {
    const { failover } = ha();
    const id = idempotencyKey(ctx, deps.identity);
    const body = await readValidBody(ctx, commandBody);
    ctx.body = await failover.transfer({
      id,
      authority: deps.identity.authority(body.authority),
      target: body.target,
      source: body.source,
    });
  });

  router.get('/authorities/:authority', requireScope(ADMIN_READ_SCOPE), async (ctx) => {
    const { consensus } = ha();
    const authority = deps.identity.authority(ctx.params.authority);
    const ownership = consensus.view().state.authorities[authority];
    if (!ownership) throw problems.notFound(`${authority} has no home`, { authority });
    ctx.body = { authority, home: ownership.home, epoch: ownership.epoch };
  });

  router.get('/members', requireScope(ADMIN_READ_SCOPE), async (ctx) => {
    ctx.body = { members: deps.tracker.snapshot() };
  });

  return router;
}
