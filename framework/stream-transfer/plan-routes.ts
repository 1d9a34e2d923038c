import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { HttpProblem, invalidBodyField, readValidBody, validate } from '@baton/http';
import { MAX_MOVES_PER_SECOND, MAX_PLAN_CONCURRENT, MAX_PLAN_NODES } from './command-schema.js';
import type { StreamCommand, StreamResult } from './commands.js';
import { DEFAULT_REBALANCE_IN_FLIGHT } from './drain-defaults.js';
import { ID_PATTERN } from './model.js';
import type { PlanGoal } from './plan-record.js';
import { planSummary, planView } from './plan-view.js';
import type { StreamMetadata } from './stream-metadata.js';

const nodeId = z.string().regex(ID_PATTERN, 'a node id');
const maxConcurrent = z
  .number({ error: 'maxConcurrent must be a whole number' })
  .int('maxConcurrent must be a whole number')
  .positive('maxConcurrent must be >= 1')
  .max(MAX_PLAN_CONCURRENT, `maxConcurrent must be <= ${MAX_PLAN_CONCURRENT}`)
  .describe('Moves of the plan in flight at once');
const movesPerSecond = z
  .number({ error: 'movesPerSecond must be a number' })
  .positive('movesPerSecond must be > 0')
  .max(MAX_MOVES_PER_SECOND, `movesPerSecond must be <= ${MAX_MOVES_PER_SECOND}`)
  .describe('Moves started per second at most');
const goalName = z.enum(['rebalance', 'drain', 'restore-preferences'], { error: 'goal is rebalance, drain or restore-preferences' });
const nodeList = z.array(nodeId).min(1, 'nodes must name at least one node').max(MAX_PLAN_NODES, `nodes names at most ${MAX_PLAN_NODES} nodes`);

export const planLimitsBody = z.object({ maxConcurrent: maxConcurrent.optional(), movesPerSecond: movesPerSecond.optional() }).strict();

export const createPlanBody = z
  .object({
    goal: z
      .union([goalName, z.object({ type: goalName, nodes: nodeList.optional() }).strict()])
      .describe('rebalance (even out streams per node), drain (empty `nodes`) or restore-preferences (streams back on the labels they prefer); a name, or {type, nodes}'),
    nodes: nodeList.optional().describe('With goal drain: the nodes to empty'),
    limits: planLimitsBody.optional().describe(`Limits of the run; maxConcurrent ${DEFAULT_REBALANCE_IN_FLIGHT} and no pace when left out`),
  })
  .strict();

export const setPlanLimitsBody = z
  .object({
    maxConcurrent: maxConcurrent.optional(),
    movesPerSecond: movesPerSecond.nullable().optional().describe('Moves started per second at most; null takes the pace off'),
  })
  .strict()
  .refine((body) => body.maxConcurrent !== undefined || body.movesPerSecond !== undefined, { message: 'give maxConcurrent or movesPerSecond (or both)' });

export const planParam = z.object({ plan: z.string().regex(/^plan-\d{1,16}$/, 'a plan id is plan-<number>') });

export interface PlanRouteDeps {
  decide(ctx: Context, command: StreamCommand): Promise<Extract<StreamResult, { ok: true }>>;
  state(): Promise<StreamMetadata>;
}

/** The goal a create asks for, with the field at fault named when the body does not say it whole. */
function goalOf(body: z.infer<typeof createPlanBody>): PlanGoal {
  const type = typeof body.goal === 'string' ? body.goal : body.goal.type;
  if (typeof body.goal !== 'string' && body.goal.nodes !== undefined && body.nodes !== undefined) throw invalidBodyField('nodes', 'give the nodes once: in goal.nodes or in nodes');
  const nodes = typeof body.goal === 'string' ? body.nodes : (body.goal.nodes ?? body.nodes);
  if (type !== 'drain') {
    if (nodes !== undefined) throw invalidBodyField('nodes', `nodes goes with goal drain only, not ${type}`);
    return { type };
  }
  if (!nodes) throw invalidBodyField('nodes', 'goal drain needs the nodes to empty');
  return { type, nodes: [...new Set(nodes)] };
}

/**
 * Plans as objects: POST /plans plans a goal and moves nothing (the answer holds its moves and
 * predicted effect), POST /plans/{plan}/execute runs it (412 when the metadata changed since it
 * was planned), PATCH changes its limits while it runs, DELETE stops it after the moves in
 * flight. Every member answers alike: plans are part of the replicated metadata.
 */
export function addPlanRoutes(router: Router, deps: PlanRouteDeps): void {
  const answer = async (ctx: Context, id: string) => {
    const state = await deps.state();
    const plan = state.plans.get(id);
    if (!plan) throw new HttpProblem({ status: 404, type: 'plan-not-found', detail: `no plan ${id} (plans are kept while they are among the last few)`, extra: { plan: id } });
    ctx.body = planView(state, plan);
  };
  /** A change answers the plan as the command left it (a replay under its Idempotency-Key: as the first request left it). */
  const decided = async (ctx: Context, result: Extract<StreamResult, { ok: true }>, id: string) => {
    if (result.planView) ctx.body = result.planView;
    else await answer(ctx, id);
  };

  router.post('/plans', async (ctx) => {
    const body = await readValidBody(ctx, createPlanBody);
    const limits = { maxConcurrent: body.limits?.maxConcurrent ?? DEFAULT_REBALANCE_IN_FLIGHT, ...(body.limits?.movesPerSecond !== undefined ? { movesPerSecond: body.limits.movesPerSecond } : {}) };
    const result = await deps.decide(ctx, { type: 'create-plan', goal: goalOf(body), limits });
    ctx.status = 201;
    ctx.set('Location', `/v1/admin/plans/${result.plan!}`);
    await decided(ctx, result, result.plan!);
  });

  router.get('/plans', async (ctx) => {
    const state = await deps.state();
    ctx.body = { plans: state.plans.list().map((plan) => planSummary(state, plan)) };
  });

  router.get('/plans/:plan', async (ctx) => {
    const { plan } = validate(planParam, ctx.params, 'path');
    await answer(ctx, plan);
  });

  router.post('/plans/:plan/execute', async (ctx) => {
    const { plan } = validate(planParam, ctx.params, 'path');
    const result = await deps.decide(ctx, { type: 'execute-plan', plan });
    ctx.status = result.duplicate ? 200 : 202;
    await decided(ctx, result, plan);
  });

  router.patch('/plans/:plan', async (ctx) => {
    const { plan } = validate(planParam, ctx.params, 'path');
    const body = await readValidBody(ctx, setPlanLimitsBody);
    await decided(ctx, await deps.decide(ctx, { type: 'set-plan-limits', plan, ...body }), plan);
  });

  router.delete('/plans/:plan', async (ctx) => {
    const { plan } = validate(planParam, ctx.params, 'path');
    await decided(ctx, await deps.decide(ctx, { type: 'cancel-plan', plan }), plan);
  });
}
