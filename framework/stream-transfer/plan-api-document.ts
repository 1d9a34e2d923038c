import type { OperationSpec } from '@baton/http';
import { KEY_HEADER, admin, keyed, keyedAnswer, ok, problems } from './api-document-parts.js';
import { createPlanBody, planParam, setPlanLimitsBody } from './plan-routes.js';
import { planExamples as ex, planListSchema, planSchema, runningPlanExample } from './plan-schemas.js';

/** The plan routes of a stream node's admin API (plan-routes.ts). */
export const planOps: OperationSpec[] = [
  admin({
    method: 'post',
    path: '/v1/admin/plans',
    summary: 'Plan a goal (rebalance, drain of nodes, restore-preferences) and move nothing: the plan, its moves and its predicted effect',
    operationId: 'createPlan',
    description:
      'Planned by the metadata state machine, so every member holds the same plan (the last 4 waiting plans are kept with their moves). ' +
      'The effect is per node and per label value, before and after, with the placement violations before and after and the streams no node can take. ' +
      'Limits: maxConcurrent (default 16) and movesPerSecond (none: as fast as maxConcurrent allows). Nothing moves until POST /v1/admin/plans/{plan}/execute.',
    params: { headers: [KEY_HEADER] },
    requestBody: createPlanBody,
    requestExample: ex.create,
    responses: {
      201: (() => {
        const answer = keyedAnswer('Planned: nothing moved', planSchema, ex.plan);
        return { ...answer, headers: { ...answer.headers, Location: { description: 'The plan: /v1/admin/plans/{plan}' } } };
      })(),
      ...problems(400, 404, 413, 415, 503),
      400: 'Invalid input: an unknown goal, nodes without goal drain or drain without nodes, limits of 0 or over their bound (the field named)',
      404: 'A node of the drain is not registered',
      ...keyed,
    },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/plans',
    summary: 'The plans kept, newest first, with their status and progress',
    operationId: 'listPlans',
    responses: { 200: ok('The plans', planListSchema, ex.list), ...problems(503) },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/plans/{plan}',
    summary: 'A plan: its status, progress, first moves (waiting ones once it runs) and predicted effect',
    operationId: 'getPlan',
    params: { path: planParam },
    responses: { 200: ok('The plan', planSchema, ex.plan), ...problems(400, 503), 404: 'No such plan (or it is no longer kept)' },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/plans/{plan}/execute',
    summary: 'Run a plan: its moves start within its limits, in plan order, each checked again when it starts',
    operationId: 'executePlan',
    description:
      'One plan runs at a time (and none beside a POST /v1/admin/rebalance): 409 plan-running. A plan built on a view of the metadata that has changed since ' +
      '(nodes, owners, placements or transfers) is refused with 412 plan-stale, naming plan_view and current_view: plan again. A drain plan marks its nodes ' +
      'draining (they take no new stream), and moves their streams at its own limits. Progress: GET /v1/admin/plans/{plan}.',
    params: { path: planParam, headers: [KEY_HEADER] },
    responses: {
      200: keyedAnswer('Already running or completed', planSchema, runningPlanExample),
      202: keyedAnswer('Running', planSchema, runningPlanExample),
      ...problems(400, 503),
      404: 'No such plan',
      409: 'Another plan or a rebalance is running (plan-running), or this plan was cancelled (plan-ended)',
      412: 'The metadata changed since the plan was built (plan-stale): nothing moved',
      ...keyed,
    },
  }),
  admin({
    method: 'patch',
    path: '/v1/admin/plans/{plan}',
    summary: "Change a plan's limits, also while it runs: moves in flight above a lowered maxConcurrent finish and none starts until it is below",
    operationId: 'setPlanLimits',
    params: { path: planParam, headers: [KEY_HEADER] },
    requestBody: setPlanLimitsBody,
    requestExample: ex.limits,
    responses: {
      200: keyedAnswer('The plan with its new limits', planSchema, runningPlanExample),
      ...problems(400, 413, 415, 503),
      404: 'No such plan',
      409: 'The plan has ended (plan-ended)',
      ...keyed,
    },
  }),
  admin({
    method: 'delete',
    path: '/v1/admin/plans/{plan}',
    summary: 'Stop a plan: its waiting moves are dropped, those in flight finish (a waiting plan is cancelled unrun)',
    operationId: 'cancelPlan',
    params: { path: planParam, headers: [KEY_HEADER] },
    responses: {
      200: keyedAnswer('Cancelled', planSchema, { ...runningPlanExample, status: 'cancelled' }),
      ...problems(400, 503),
      404: 'No such plan',
      409: 'The plan has completed (plan-ended)',
      ...keyed,
    },
  }),
];
