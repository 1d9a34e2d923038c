import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { AuditStore, AuthorityId, IdentitySupplier } from '@baton/contracts';
import {
  requireScope,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyKey,
  readValidBody,
  validate,
  type ApiDocument,
  type OperationSpec,
  route,
  problems,
  principalOf,
  ETAG_HEADER,
  IF_MATCH_HEADER,
  expectedVersion,
  setVersionTag,
} from '@baton/http';
import { SharedCatchUp } from '@baton/consensus';
import {
  auditRecordSchema,
  authorityPlacementBody,
  authorityPlacementSchema,
  membersSchema,
  ownershipSchema,
  rawTransferOutcomeSchema,
  transferStatusSchema,
} from './api-schemas.js';
import { authorityExamples as ex, authorityProblemExtensions } from './api-examples.js';
import type { OwnershipConsensus } from './audit-projection.js';
import { placementOf, type SetAuthorityPlacementResult } from './ownership.js';
import type { CatchUpViews } from './catch-up-view.js';
import { routeAudit } from './audit-routes.js';
import { DEFAULT_AUTHORITY_PAGE, MAX_AUTHORITY_PAGE, authorityPage, authorityPageQuery, authorityPageSchema } from './authority-listing.js';
import type { FailoverCommands } from './failover-command.js';
import type { MemberTracker } from './member-tracker.js';
import type { TransferDriver } from './transfer-driver.js';
import { OwnershipUnavailableError } from './transfer-errors.js';

/** Scopes of the control listener. */
export const ADMIN_WRITE_SCOPE = 'admin:write';
export const ADMIN_READ_SCOPE = 'admin:read';

/** The body's spelling of If-Match: the epoch GET /authorities/{authority} answered as its ETag. */
const expectedEpoch = z
  .number()
  .int('expected_epoch must be an integer')
  .nonnegative('expected_epoch must be >= 0')
  .max(Number.MAX_SAFE_INTEGER);

const transferBody = z
  .object({
    authority: z.string().min(1, 'name the authority to move'),
    source: z.string().min(1, 'name the datacenter the authority lives in').max(128, 'a datacenter name is at most 128 characters'),
    target: z.string().min(1, 'name the datacenter to move it to').max(128, 'a datacenter name is at most 128 characters'),
    reason: z.string().max(1024, 'keep the reason under 1024 characters'),
    expected_epoch: expectedEpoch.optional(),
    not_before: z.iso.datetime({ offset: true }).optional().describe('Schedule it: registered now, started at this time (RFC 3339); answered 202 with its status'),
    not_after: z.iso.datetime({ offset: true }).optional().describe('Abandon it, with no audit, if it has not committed by this time (RFC 3339)'),
  })
  .strict();

const commandBody = z
  .object({
    type: z.literal('transfer_authority'),
    authority: z.string().min(1),
    target: z.string().min(1),
    source: z.string().min(1).optional(),
    expected_epoch: expectedEpoch.optional(),
    reason: z.string().max(1024, 'keep the reason under 1024 characters').optional().describe('Why it moves: sealed into the move\'s audit record'),
  })
  .strict();

const authorityParam = z.object({ authority: z.string().min(1) });

const keyHeader = {
  name: IDEMPOTENCY_KEY_HEADER,
  description:
    'The operation identity; assigned when absent and echoed in the response. Reuse it to retry the same request.',
};
const epochMatch = {
  name: IF_MATCH_HEADER,
  description:
    'Optional: "<epoch>", the ETag of GET /availability/v1/authorities/{authority}: move it only while it is still at that epoch (or send expected_epoch). ' +
    'Decided by the ownership state machine, so of two operators acting on one reading only one moves it.',
};
const PRECONDITION_FAILED = 'The authority is not at the expected epoch: nothing moved; the problem names `owner` (the home) and `epoch`';
const MALFORMED = 'Invalid body or authority, or an If-Match that is not one quoted epoch ("7") or disagrees with expected_epoch';
const echoedKey = {
  [IDEMPOTENCY_KEY_HEADER]: { description: 'The operation identity, given or assigned' },
};
const UNAVAILABLE =
  'Mode dc (no ownership consensus), or the metadata store or consensus cannot answer now';

/** What the control listener needs in mode ha only. */
export interface HaPieces {
  engine: TransferDriver;
  failover: FailoverCommands;
  consensus: OwnershipConsensus;
  audit: AuditStore;
  /** An authority's catch-up as this member's replicas see it. */
  catchUps: CatchUpViews;
}

/** What the control listener serves; absent consensus pieces mean mode dc. */
export interface ControlRouterDeps {
  identity: IdentitySupplier;
  tracker: MemberTracker;
  /** Present in mode ha only. */
  ha?: HaPieces;
  /** The roster's datacenters: what an authority's allowedHomes may name. */
  datacenters?: () => string[];
}

/**
 * The availability control listener (its own port): planned transfers, the raw command, the
 * member tracker and ownership reads, each declared in `document` as it is routed. In mode dc
 * there is no ownership consensus and every transfer request answers 503.
 */
export function createControlRouter(deps: ControlRouterDeps, document: ApiDocument): Router {
  const router = new Router({ prefix: '/availability/v1' });
  document.problemExtensions(authorityProblemExtensions);
  const ha = () => {
    if (!deps.ha) {
      throw new OwnershipUnavailableError(
        'this node runs in mode dc, which has no ownership consensus: send transfer requests to a node in mode ha',
      );
    }
    return deps.ha;
  };
  // A member that has not applied a commit yet (it just restarted, or another member took the
  // request, or the leader answered the request before this member applied it) catches up with
  // the leader's commit before it reads, so an operator never sees a state older than their own
  // last change: not a 404, an old home or a page missing what was just answered 200.
  const reads = deps.ha ? new SharedCatchUp(() => deps.ha!.consensus.read()) : undefined;
  const caughtUp = async () => {
    if (reads) await reads.catchUp();
  };
  /** Routes one operation, documented, and refused to a token without the scope it declares. */
  const scopedRoute = (spec: OperationSpec & { scope: string }, handler: Middleware<any, any>) =>
    route(router, document, spec, requireScope(spec.scope), handler);
  /**
   * An operation of mode ha on the authority its path names: 503 in mode dc, then 400 when the
   * identity supplier refuses the name; the handler gets the authority and the ha pieces.
   */
  const authorityRoute = (
    spec: OperationSpec & { scope: string },
    handler: (ctx: Context, authority: AuthorityId, pieces: HaPieces) => Promise<void> | void,
  ) =>
    scopedRoute(
      {
        ...spec,
        params: { ...spec.params, path: authorityParam },
        responses: { 400: 'Invalid authority identity', 503: UNAVAILABLE, ...spec.responses },
      },
      async (ctx) => {
        const pieces = ha();
        await handler(ctx, deps.identity.authority(ctx.params.authority), pieces);
      },
    );

  scopedRoute(
    {
      method: 'post',
      path: '/transfers',
      summary: 'Start a planned transfer; answers once it committed, with the sealed audit record',
      operationId: 'startTransfer',
      tags: ['transfers'],
      scope: ADMIN_WRITE_SCOPE,
      params: { headers: [keyHeader, epochMatch] },
      requestBody: transferBody,
      requestExample: ex.transfer,
      responses: {
        400: MALFORMED,
        412: PRECONDITION_FAILED,
        200: {
          description: 'Committed: the sealed audit record',
          schema: auditRecordSchema,
          headers: echoedKey,
          example: ex.committed,
        },
        202: {
          description: 'Scheduled (not_before ahead): registered, starting at not_before; its status (GET /transfers/{authority} follows it, DELETE cancels it until it commits)',
          schema: transferStatusSchema,
          headers: echoedKey,
          example: ex.scheduled,
        },
        409: {
          description: 'A transfer of this authority is running, it was cancelled, the source is not its home, or it is committing',
          example: ex.transferInProgress,
        },
        422: 'The Idempotency-Key already names a different transfer',
        503: `${UNAVAILABLE}; or the move committed but the audit store did not take the record (retry with the same key); or the outcome is unknown (retry with the same key); or a peer's clock is past transfers.maxClockSkewMs (clock-skew: nothing registered)`,
        504: 'The target did not reach the barrier within the budget; nothing moved, no audit was written',
      },
    },
    async (ctx) => {
      const { engine } = ha();
      const id = idempotencyKey(ctx, deps.identity);
      const body = await readValidBody(ctx, transferBody);
      const authority = deps.identity.authority(body.authority);
      const epoch = expectedVersion(ctx, body.expected_epoch, 'expected_epoch');
      const request = {
        id,
        authority,
        source: body.source,
        target: body.target,
        reason: body.reason,
        actor: principalOf(ctx).name,
        ...(epoch === undefined ? {} : { expectedEpoch: epoch }),
        ...(body.not_before === undefined ? {} : { notBefore: Date.parse(body.not_before) }),
        ...(body.not_after === undefined ? {} : { notAfter: Date.parse(body.not_after) }),
      };
      const answer = await engine.startOrSchedule(request);
      ctx.body = 'record' in answer ? answer.record : answer.status;
      ctx.status = 'record' in answer ? 200 : 202;
    },
  );

  authorityRoute(
    {
      method: 'delete',
      path: '/transfers/{authority}',
      summary: 'Cancel a waiting transfer',
      operationId: 'cancelTransfer',
      tags: ['transfers'],
      scope: ADMIN_WRITE_SCOPE,
      responses: {
        204: 'Abandoned before it committed (also for a repeat within the abandoned window)',
        404: 'No registered transfer of this authority (or it did not commit)',
        409: 'The transfer committed or is committing: the move stands',
      },
    },
    async (ctx, authority, { engine }) => {
      await engine.cancel(authority);
      ctx.status = 204;
    },
  );

  authorityRoute(
    {
      method: 'get',
      path: '/transfers/{authority}',
      summary:
        'The transfer of an authority in flight: state, barrier, latest frontier reading, age',
      operationId: 'getTransfer',
      tags: ['transfers'],
      scope: ADMIN_READ_SCOPE,
      responses: {
        200: { description: 'The transfer in flight', schema: transferStatusSchema, example: ex.status },
        404: 'No transfer of this authority is in flight (read once this member has caught up with the leader\'s commit)',
      },
    },
    async (ctx, authority, { engine }) => {
      await caughtUp();
      const status = engine.status(authority);
      if (!status)
        throw problems.notFound(`no transfer of ${authority} is in flight`, { authority });
      ctx.body = status;
    },
  );

  scopedRoute(
    {
      method: 'post',
      path: '/commands',
      summary:
        'The raw transfer_authority command: the unconditional move a failover commits (source must be Dead), or the first home of an authority (no source); each seals an audit record (authority_established, failover_transfer with its loss report)',
      operationId: 'runCommand',
      tags: ['commands'],
      scope: ADMIN_WRITE_SCOPE,
      params: { headers: [keyHeader, epochMatch] },
      requestBody: commandBody,
      requestExample: ex.command,
      responses: {
        400: MALFORMED,
        412: PRECONDITION_FAILED,
        200: {
          description: 'Committed (or replayed under the same key)',
          schema: rawTransferOutcomeSchema,
          headers: echoedKey,
          example: ex.commandCommitted,
        },
        409: 'The source is not the home, is not Dead, or the authority is already at the target',
        422: 'The Idempotency-Key already names a different command',
        503: UNAVAILABLE,
      },
    },
    async (ctx) => {
      const { failover } = ha();
      const id = idempotencyKey(ctx, deps.identity);
      const body = await readValidBody(ctx, commandBody);
      const epoch = expectedVersion(ctx, body.expected_epoch, 'expected_epoch');
      ctx.body = await failover.transfer({
        id,
        authority: deps.identity.authority(body.authority),
        target: body.target,
        source: body.source,
        ...(epoch === undefined ? {} : { expectedEpoch: epoch }),
        actor: principalOf(ctx).name,
        ...(body.reason === undefined ? {} : { reason: body.reason }),
      });
    },
  );

  scopedRoute(
    {
      method: 'get',
      path: '/authorities',
      summary: `Authorities by id with their home and epoch, in pages, as of the leader's commit when asked: at most \`limit\` (default ${DEFAULT_AUTHORITY_PAGE}, at most ${MAX_AUTHORITY_PAGE}); \`next\` is the \`after\` of the next page, null on the last`,
      operationId: 'listAuthorities',
      tags: ['authorities'],
      scope: ADMIN_READ_SCOPE,
      params: { query: authorityPageQuery },
      responses: {
        200: { description: 'One page of authorities', schema: authorityPageSchema, example: ex.authorities },
        400: 'Invalid cursor or limit',
        503: UNAVAILABLE,
      },
    },
    async (ctx) => {
      const { consensus, catchUps } = ha();
      const { after, limit } = validate(authorityPageQuery, ctx.query, 'query');
      await caughtUp();
      ctx.body = authorityPage(consensus.view().state, after, limit, (ownership) => catchUps.of(ownership));
    },
  );

  authorityRoute(
    {
      method: 'get',
      path: '/authorities/{authority}',
      summary: "An authority's home datacenter and fencing epoch, and whether its home is still catching up on the move that made it home (read once this member has caught up with the leader's commit)",
      operationId: 'getAuthority',
      tags: ['authorities'],
      scope: ADMIN_READ_SCOPE,
      responses: {
        200: {
          description: 'Home and epoch; `catch_up` names the members of the home that refuse writes until they hold the final serials the move recorded, with the finals and what the answering member holds',
          schema: ownershipSchema,
          example: ex.ownership,
          headers: { [ETAG_HEADER]: { description: '"<epoch>": what If-Match on a transfer of the authority names' } },
        },
        404: 'The authority has no home',
      },
    },
    async (ctx, authority, { consensus, catchUps }) => {
      await caughtUp();
      const ownership = consensus.view().state.authorities.get(authority);
      if (!ownership) throw problems.notFound(`${authority} has no home`, { authority });
      setVersionTag(ctx, ownership.epoch);
      ctx.body = {
        authority,
        home: ownership.home,
        epoch: ownership.epoch,
        catch_up: catchUps.of(ownership),
        // Only when set: an authority with no placement reads as it always did.
        ...placementOf(ownership),
      };
    },
  );

  authorityRoute(
    {
      method: 'put',
      path: '/authorities/{authority}/placement',
      summary: 'Where planned transfers of an authority may go (allowedHomes) and the home it would rather have (preferredHome)',
      description:
        'A planned transfer to a datacenter outside allowedHomes is refused with 409 (move-refused-target-not-allowed). ' +
        'null (or leaving a field out) allows any datacenter / names no preference. The raw transfer_authority command a failover ' +
        'commits is not bound: a lost home must be replaceable by any datacenter that can serve it.',
      operationId: 'setAuthorityPlacement',
      tags: ['authorities'],
      scope: ADMIN_WRITE_SCOPE,
      requestBody: authorityPlacementBody,
      requestExample: ex.placement,
      responses: {
        200: { description: 'The placement now', schema: authorityPlacementSchema, example: ex.placed },
        400: 'A datacenter the roster does not list, an empty allowedHomes, or a preferredHome outside allowedHomes',
        404: 'The authority has no home',
      },
    },
    async (ctx, authority, { consensus }) => {
      const body = await readValidBody(ctx, authorityPlacementBody);
      const known = new Set(deps.datacenters?.() ?? []);
      const named = [...(body.allowedHomes ?? []), ...(body.preferredHome ? [body.preferredHome] : [])];
      const unknown = named.filter((dc) => known.size > 0 && !known.has(dc));
      if (unknown.length > 0) throw problems.badRequest(`the roster lists no datacenter ${unknown.join(', ')}`, { invalid_fields: [{ path: 'allowedHomes', message: `unknown datacenter(s): ${unknown.join(', ')}` }] });
      if (body.preferredHome && body.allowedHomes && !body.allowedHomes.includes(body.preferredHome)) {
        throw problems.badRequest(`preferredHome ${body.preferredHome} is not among allowedHomes`, { invalid_fields: [{ path: 'preferredHome', message: 'must be one of allowedHomes' }] });
      }
      const receipt = await consensus.propose({ type: 'set_authority_placement', authority, allowedHomes: body.allowedHomes ?? null, preferredHome: body.preferredHome ?? null });
      const result = receipt.result as SetAuthorityPlacementResult;
      if (!result.ok) {
        if (result.reason === 'unknown_authority') throw problems.notFound(`${authority} has no home`, { authority });
        throw problems.badRequest(`the placement of ${authority} was refused (${result.reason})`);
      }
      const { ok: _ok, ...placed } = result;
      ctx.body = placed;
    },
  );

  routeAudit({ scopedRoute, authorityRoute, ha, caughtUp, identity: deps.identity, unavailable: UNAVAILABLE, readScope: ADMIN_READ_SCOPE });

  scopedRoute(
    {
      method: 'get',
      path: '/members',
      summary: 'The member tracker: Alive, Suspect or Dead per member',
      operationId: 'listMembers',
      tags: ['members'],
      scope: ADMIN_READ_SCOPE,
      responses: { 200: { description: 'Every roster member', schema: membersSchema, example: ex.members } },
    },
    async (ctx) => {
      ctx.body = { members: deps.tracker.snapshot() };
    },
  );

  return router;
}
