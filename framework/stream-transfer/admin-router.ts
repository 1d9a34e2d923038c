import Router from '@koa/router';
import { z } from 'zod';
import type { Context } from 'koa';
import type { AuditStore, Clock } from '@baton/contracts';
import {
  requireScope,
  readValidBody,
  HttpProblem,
  principalOf,
  problems,
  validate,
  givenIdempotencyKey,
  expectedVersion,
  setVersionTag,
} from '@baton/http';
import { auditPage, auditPageQuery, auditRecordView, checkSubject } from './audit-listing.js';
import { STREAM_AUDIT_TRAIL } from './audit-trail.js';
import type { StreamCommand, StreamResult } from './commands.js';
import { CommandRejectedError } from './errors.js';
import { ID_PATTERN, MAX_NODE_SLOTS } from './model.js';
import { planRebalance } from './placement.js';
import { assertKnownLabels } from './placement-input.js';
import { addMaintenanceRoutes, DEFAULT_MAINTENANCE_BUDGET } from './maintenance-routes.js';
import type { MaintenanceBudget } from './maintenance.js';
import { labelsSchema, placementSchema } from './labels.js';
import { nodePage, pageQuery, streamPage, transferPage, transferPageQuery } from './listing.js';
import { drainProgress, nodeStatus, type DrainProgress, type NodeStatus, type RenewalAge } from './progress.js';
import { MOVES_SHOWN, planPreview, rebalancePage, rebalancePageQuery } from './rebalance-listing.js';
import { addPlanRoutes } from './plan-routes.js';
import type { StreamConsensus } from './stream-node.js';

/** The scope an admin token must carry (401 without a token, 403 without the scope). */
export const ADMIN_SCOPE = 'admin';
/** Set on an answer replayed from the decision an earlier request under the same Idempotency-Key got. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const id = (what: string) =>
  z.string().regex(ID_PATTERN, `${what} must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit`);

export const registerNodeBody = z
  .object({
    id: id('a node id'),
    address: z.url({ protocol: /^https?$/, error: 'address must be an http(s) URL' }),
    slots: z.number().int('slots must be an integer').positive('slots must be >= 1').max(MAX_NODE_SLOTS, `slots must be <= ${MAX_NODE_SLOTS}`),
    labels: labelsSchema.optional().describe('What placements match against, e.g. {"zone": "z1", "rack": "r3"}'),
  })
  .strict();
export const setPlacementBody = z.object({ placement: placementSchema.describe('The new placement; {} removes it') }).strict();
export const createStreamBody = z
  .object({ stream: id('a stream id'), node: id('a node id').optional(), placement: placementSchema.optional() })
  .strict();
/** An epoch or a stream count an operator expects (the body's spelling of If-Match). */
const version = (what: string) =>
  z.number().int(`${what} must be an integer`).nonnegative(`${what} must be >= 0`).max(Number.MAX_SAFE_INTEGER);
export const transferBody = z
  .object({
    stream: id('a stream id'),
    target: id('a node id'),
    expected_owner: id('expected_owner').optional(),
    expected_epoch: version('expected_epoch').optional(),
  })
  .strict();
export const drainBody = z
  .object({
    maxInFlight: z.number().int().positive('maxInFlight must be >= 1').max(10_000).optional(),
    expected_streams: version('expected_streams').optional(),
  })
  .strict()
  .optional();
export const rebalanceBody = z
  .object({
    dryRun: z.boolean().optional(),
    maxInFlight: z.number().int().positive('maxInFlight must be >= 1').max(10_000).optional(),
  })
  .strict()
  .optional();
export const failoverBody = z
  .object({
    force: z.boolean({ error: 'force must be true or false' }).optional(),
    expected_streams: version('expected_streams').optional(),
  })
  .strict()
  .optional();
export const nodeParam = z.object({ node: id('a node id') });
export const auditIdParam = z.object({ id: z.string().regex(/^\d{1,16}-\d{1,16}$/, 'an audit record id is <commit_index>-<seq>') });
const streamParam = z.object({ stream: id('a stream id') });

/** What the admin API needs to know beyond the metadata. */
export interface AdminRouterOptions {
  /** Milliseconds since a node's last lease renewal, when this member observes liveness. */
  renewalAge?: RenewalAge;
  /** Whether the object store can fence a failed-over node (conditional puts). */
  canFence: () => boolean;
  /** Called after each failover this API proposed (metrics). */
  onFailover?: (node: string, result: Extract<StreamResult, { ok: true }>) => void;
  /** This member's audit store: GET /audit reads the trail from it (503 problem without one). */
  audit?: AuditStore;
  /** Stamps each change with the time its audit record carries (and times maintenance windows). */
  clock?: Clock;
  /** How many nodes may be in maintenance at once, and whether they must share a label value. */
  maintenanceBudget?: MaintenanceBudget;
}

/**
 * The admin API: registration, placement, transfers, drain, rebalance and failover. Every
 * change is a metadata command; the answer is the state machine's decision, and a refusal is
 * a problem+json naming the reason. Reads use the linearizable view, so an operator never sees
 * a state older than their own last change.
 */
export function createAdminRouter(consensus: StreamConsensus, options: AdminRouterOptions): Router {
  const age = options.renewalAge;
  const router = new Router({ prefix: '/v1/admin' });
  router.use(requireScope(ADMIN_SCOPE));

  /**
   * Proposes one admin write under the caller's Idempotency-Key, if given. The key goes into
   * consensus with the command: the replicated idempotency window (carried in snapshots) holds
   * the first decision, so a retry reaching another member, another leader or a restarted
   * cluster gets that decision, and the same key with another command is refused (422).
   * Answers are built from the decision, so a replay answers as the first request did.
   *
   * Each change carries who asked (the principal) and, unkeyed, when by this member's clock,
   * for the audit record the state machine seals. A keyed change carries no time: a retry must
   * be the same command as the first attempt for the window to replay it.
   */
  const decide = async (ctx: Context, command: StreamCommand): Promise<Extract<StreamResult, { ok: true }>> => {
    const key = givenIdempotencyKey(ctx);
    const stamp = {
      actor: principalOf(ctx).name,
      ...(options.clock && key === undefined ? { at: Math.max(0, Math.floor(options.clock.now())) } : {}),
    };
    const receipt = await consensus.propose({ ...command, ...stamp }, key === undefined ? undefined : { idempotencyKey: key });
    if (receipt.replayed) ctx.set(REPLAYED_HEADER, 'true');
    if (!receipt.result.ok) throw new CommandRejectedError(receipt.result.reason, receipt.result.message, receipt.result.current, receipt.result.streams);
    return receipt.result;
  };
  const state = async () => (await consensus.read()).state;
  if (options.clock) {
    addMaintenanceRoutes(router, { decide, state, clock: options.clock, budget: options.maintenanceBudget ?? DEFAULT_MAINTENANCE_BUDGET, ...(age ? { age } : {}) });
  }
  addPlanRoutes(router, { decide, state });
  const requireAudit = (): AuditStore => {
    if (options.audit) return options.audit;
    throw new HttpProblem({ status: 503, type: 'audit-unavailable', detail: 'this node has no audit store: configure auditStore in its host config' });
  };

  router.post('/nodes', async (ctx) => {
    const body = await readValidBody(ctx, registerNodeBody);
    const result = await decide(ctx, { type: 'register-node', node: body.id, address: body.address, slots: body.slots, ...(body.labels ? { labels: body.labels } : {}) });
    ctx.status = result.duplicate ? 200 : 201;
    ctx.body = { node: result.progress ? statusOf(result.progress) : nodeStatus(await state(), body.id, age), duplicate: result.duplicate ?? false };
  });

  router.get('/nodes', async (ctx) => {
    const { after, limit } = validate(pageQuery, ctx.query, 'query');
    const { items, next } = nodePage(await state(), after, limit, age);
    ctx.body = { nodes: items, next };
  });

  router.get('/streams', async (ctx) => {
    const { after, limit } = validate(pageQuery, ctx.query, 'query');
    const current = await state();
    const { items, next } = streamPage(current, after, limit);
    ctx.body = { streams: items, next, total: current.streamCount };
  });

  router.get('/nodes/:node', async (ctx) => {
    const { node } = validate(nodeParam, ctx.params, 'path');
    const progress = drainProgress(await state(), node, age);
    if (!progress) throw problems.notFound(`node ${node} is not registered`, { node });
    // The version a drain or failover of this node may be guarded with (If-Match).
    setVersionTag(ctx, progress.owned);
    ctx.body = progress;
  });

  router.post('/nodes/:node/drain', async (ctx) => {
    const { node } = validate(nodeParam, ctx.params, 'path');
    const body = await readValidBody(ctx, drainBody, { optional: true });
    const expectedStreams = expectedVersion(ctx, body?.expected_streams, 'expected_streams');
    const result = await decide(ctx, {
      type: 'drain',
      node,
      ...(body?.maxInFlight ? { maxInFlight: body.maxInFlight } : {}),
      ...(expectedStreams === undefined ? {} : { expectedStreams }),
    });
    ctx.status = 202;
    // From the decision (a replay answers the same); a result of an older member carries none.
    ctx.body = result.progress ?? drainProgress(await state(), node, age);
  });

  router.post('/nodes/:node/undrain', async (ctx) => {
    const { node } = validate(nodeParam, ctx.params, 'path');
    const result = await decide(ctx, { type: 'undrain', node });
    ctx.body = result.progress ?? drainProgress(await state(), node, age);
  });

  /**
   * Failover: every stream of a Dead node (and every transfer from it) goes to live nodes at
   * the next epoch, without the node's close. A node that is not Dead needs `force`; so does a
   * store without conditional puts, where the old owner cannot be fenced in the store.
   */
  router.post('/nodes/:node/failover', async (ctx) => {
    const { node } = validate(nodeParam, ctx.params, 'path');
    const body = await readValidBody(ctx, failoverBody, { optional: true });
    const force = body?.force ?? false;
    const expectedStreams = expectedVersion(ctx, body?.expected_streams, 'expected_streams');
    if (!options.canFence() && !force) {
      throw new HttpProblem({
        status: 409,
        type: 'fencing-unavailable',
        detail:
          'the object store does not support conditional puts, so a failed-over node could still overwrite its streams there: ' +
          'use a store with conditional puts, or force the failover once the node is certainly stopped',
        extra: { node },
      });
    }
    // What the operator's decision rested on, as this member saw it: the node's published
    // liveness and, unkeyed, how long ago it last renewed its lease (a keyed retry must be the
    // same command as the first attempt, so it carries nothing that changes with time).
    const seen = (await state()).node(node);
    const keyed = givenIdempotencyKey(ctx) !== undefined;
    const renewed = age?.(node);
    const evidence = keyed
      ? `${node} was ${seen?.liveness ?? 'Alive'}`
      : `${node} was ${seen?.liveness ?? 'Alive'}; ${renewed === null || renewed === undefined ? 'no lease renewal seen by the answering member' : `its lease was last renewed ${Math.round(renewed)} ms before the failover`}`;
    const result = await decide(ctx, {
      type: 'failover',
      node,
      ...(force ? { force } : {}),
      ...(expectedStreams === undefined ? {} : { expectedStreams }),
      evidence,
    });
    options.onFailover?.(node, result);
    ctx.status = 202;
    ctx.body = {
      ...(result.progress ?? drainProgress(await state(), node, age)),
      moved: result.moved ?? 0,
      remaining: result.remaining ?? 0,
      unplaceable: result.unplaceable ?? [],
      duplicate: result.duplicate ?? false,
    };
  });

  router.post('/streams', async (ctx) => {
    const body = await readValidBody(ctx, createStreamBody);
    if (body.placement) assertKnownLabels(await state(), body.placement);
    const result = await decide(ctx, {
      type: 'create-stream',
      stream: body.stream,
      ...(body.node ? { node: body.node } : {}),
      ...(body.placement ? { placement: body.placement } : {}),
    });
    ctx.status = result.duplicate ? 200 : 201;
    ctx.body = { stream: body.stream, owner: result.node, epoch: result.epoch, duplicate: result.duplicate ?? false };
  });

  router.patch('/streams/:stream', async (ctx) => {
    const { stream } = validate(streamParam, ctx.params, 'path');
    const body = await readValidBody(ctx, setPlacementBody);
    assertKnownLabels(await state(), body.placement);
    const result = await decide(ctx, { type: 'set-placement', stream, placement: body.placement });
    ctx.body = { stream, owner: result.node, epoch: result.epoch, placement: body.placement, satisfied: result.satisfied ?? false };
  });

  router.post('/transfers', async (ctx) => {
    const body = await readValidBody(ctx, transferBody);
    const expectedEpoch = expectedVersion(ctx, body.expected_epoch, 'expected_epoch');
    const result = await decide(ctx, {
      type: 'transfer',
      stream: body.stream,
      target: body.target,
      reason: 'admin',
      ...(body.expected_owner === undefined ? {} : { expectedOwner: body.expected_owner }),
      ...(expectedEpoch === undefined ? {} : { expectedEpoch }),
    });
    ctx.status = result.duplicate ? 200 : 202;
    ctx.body = result.transfer
      ? { status: 'pending', ...result.transfer, duplicate: result.duplicate ?? false }
      : { status: 'settled', stream: body.stream, owner: result.node, duplicate: true };
  });

  router.get('/transfers', async (ctx) => {
    const { after, limit } = validate(transferPageQuery, ctx.query, 'query');
    const current = await state();
    const { items, next } = transferPage(current, after, limit);
    ctx.body = { transfers: items, next, total: current.transferCount };
  });

  router.get('/transfers/:stream', async (ctx) => {
    const { stream } = validate(streamParam, ctx.params, 'path');
    const current = await state();
    const record = current.stream(stream);
    if (!record) throw problems.notFound(`stream ${stream} does not exist`, { stream });
    const pending = current.transfer(stream);
    setVersionTag(ctx, record.epoch);
    ctx.body = pending
      ? { status: 'pending', ...pending }
      : { status: 'settled', stream, owner: record.owner, epoch: record.epoch };
  });

  // A plan can hold a move per stream: answers show its size, its first moves and what it does
  // per node, and the waiting queue is read in pages (GET /rebalance?after=), so no answer grows
  // with the cluster.
  /** A rebalance's answer from the metadata now, for a result of an older member that carries none. */
  const startedRebalance = async () => {
    const current = await state();
    return { plan: planPreview(current, []), progress: rebalancePage(current, undefined, MOVES_SHOWN) };
  };

  router.post('/rebalance', async (ctx) => {
    const body = await readValidBody(ctx, rebalanceBody, { optional: true });
    if (body?.dryRun) {
      const current = await state();
      ctx.body = { dryRun: true, ...planPreview(current, planRebalance(current)) };
      return;
    }
    const result = await decide(ctx, { type: 'rebalance', ...(body?.maxInFlight ? { maxInFlight: body.maxInFlight } : {}) });
    ctx.status = 202;
    const decided = result.rebalance ?? (await startedRebalance());
    ctx.body = { dryRun: false, ...decided.plan, progress: decided.progress };
  });

  /**
   * The audit trail, newest first, from this member's audit store: every record sealed by the
   * state machine (creations, transfers, drains, rebalances, failovers, liveness verdicts).
   */
  router.get('/audit', async (ctx) => {
    const query = validate(auditPageQuery, ctx.query, 'query');
    // Only a subject filter needs the metadata: the trail itself is this member's own store,
    // readable while consensus has no leader.
    if (query.subject !== undefined) checkSubject(await state(), query.subject);
    const page = await auditPage(requireAudit(), query);
    ctx.body = { trail: STREAM_AUDIT_TRAIL, ...page };
  });

  /** The chain's head and anchors as the replicated state keeps them: what `baton audit verify` checks the store against. */
  router.get('/audit/chain', async (ctx) => {
    const chain = (await state()).auditChain;
    ctx.body = { trail: STREAM_AUDIT_TRAIL, head: chain.head ?? null, anchors: chain.anchors };
  });

  router.get('/audit/:id', async (ctx) => {
    const { id } = validate(auditIdParam, ctx.params, 'path');
    const record = await requireAudit().byId(id);
    if (!record || record.authority !== STREAM_AUDIT_TRAIL) throw problems.notFound(`no audit record ${id}`, { id });
    ctx.body = auditRecordView(record);
  });

  router.get('/rebalance', async (ctx) => {
    const { after, limit } = validate(rebalancePageQuery, ctx.query, 'query');
    ctx.body = rebalancePage(await state(), after, limit);
  });

  return router;
}

/** A registration answers the node's status alone, without the drain's fields. */
function statusOf(progress: DrainProgress): NodeStatus {
  const { drainInFlight: _inFlight, remaining: _remaining, ...status } = progress;
  return status;
}
