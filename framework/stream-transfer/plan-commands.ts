import type { ApplyContext } from '@baton/contracts';
import { CLUSTER_SUBJECT, type AuditSeal } from './audit-trail.js';
import type { Accepted, RejectReason, StreamCommand, StreamResult } from './commands.js';
import type { StreamId } from './model.js';
import { planEffect } from './plan-effect.js';
import { planGoal } from './plan-goals.js';
import { allowanceCap, type PlanGoal, type PlanRecord } from './plan-record.js';
import type { StreamMetadata } from './stream-metadata.js';
import { planView } from './plan-view.js';
import { DEFAULT_DRAIN_IN_FLIGHT } from './drain-defaults.js';

/**
 * The plan commands (create, execute, limits, cancel, the pacer's allowance), applied inside
 * `apply`. A plan runs as the metadata's rebalance queue does: its moves start as transfers
 * settle, up to `maxConcurrent` in flight and, when paced, only as the leader's pacer allows, so
 * a new leader carries a plan on from the replicated state alone.
 */
type Reject = (reason: RejectReason, message: string) => StreamResult;
/** Starts the queued moves the limits allow (the state machine's `launchQueued`). */
type Launch = () => StreamId[];
type Command<T extends StreamCommand['type']> = Extract<StreamCommand, { type: T }>;

function withStarted(result: Accepted, started: StreamId[]): Accepted {
  return started.length > 0 ? { ...result, started } : result;
}

/** The answer of a plan command: the plan's id, and the plan as the command left it. */
function decided(state: StreamMetadata, id: string, result: Accepted): Accepted {
  const plan = state.plans.get(id);
  return { ...result, plan: id, ...(plan ? { planView: planView(state, plan) } : {}) };
}

export function describeGoal(goal: PlanGoal): string {
  return goal.type === 'drain' ? `drain of ${goal.nodes.join(', ')}` : goal.type;
}

export function createPlan(state: StreamMetadata, c: Command<'create-plan'>, ctx: ApplyContext, reject: Reject): StreamResult {
  if (c.goal.type === 'drain') {
    const unknown = c.goal.nodes.find((node) => !state.node(node));
    if (unknown !== undefined) return reject('unknown_node', `node ${unknown} is not registered`);
  }
  const plan = planGoal(state, c.goal);
  const record: PlanRecord = {
    id: `plan-${ctx.position.index}`,
    goal: structuredClone(c.goal),
    limits: { ...c.limits },
    status: 'planned',
    createdAt: ctx.position.index,
    actor: c.actor ?? 'system:admin',
    planned: plan.moves.length,
    moves: plan.moves,
    effect: planEffect(state, plan),
  };
  state.plans.add(record);
  return decided(state, record.id, { ok: true });
}

function findPlan(state: StreamMetadata, id: string, reject: Reject): PlanRecord | StreamResult {
  return state.plans.get(id) ?? reject('unknown_plan', `no plan ${id} (plans are kept while they are among the last few)`);
}

export function executePlan(state: StreamMetadata, c: Command<'execute-plan'>, ctx: ApplyContext, seal: AuditSeal, reject: Reject, launch: Launch): StreamResult {
  const plan = findPlan(state, c.plan, reject);
  if ('ok' in plan) return plan;
  if (plan.status === 'running' || plan.status === 'completed') return decided(state, plan.id, { ok: true, duplicate: true });
  if (plan.status === 'cancelled') return reject('plan_ended', `plan ${plan.id} was cancelled: create another`);
  const running = state.plans.running();
  if (running) return reject('plan_running', `plan ${running.id} is running: one plan runs at a time (cancel it, or wait for it to end)`);
  if (state.rebalanceWaiting > 0 || state.rebalancesInFlight > 0) {
    return reject('plan_running', `a rebalance is under way (${state.rebalanceWaiting} moves waiting, ${state.rebalancesInFlight} in flight): wait for it to end`);
  }
  if (state.viewAt > plan.createdAt) {
    return {
      ok: false,
      reason: 'plan_stale',
      message: `plan ${plan.id} was built on the metadata at log index ${plan.createdAt}; nodes, owners, placements or transfers changed at index ${state.viewAt}: create the plan again`,
      current: { plan: plan.id, plan_view: plan.createdAt, current_view: state.viewAt },
    };
  }
  const cause = seal.seal({
    kind: 'plan_executed',
    subject_type: 'cluster',
    subject: CLUSTER_SUBJECT,
    actor: c.actor ?? 'system:admin',
    reason: `${plan.id} (${describeGoal(plan.goal)}): ${plan.planned} moves, ${plan.limits.maxConcurrent} in flight at once${plan.limits.movesPerSecond ? `, ${plan.limits.movesPerSecond} per second` : ''}`,
  });
  if (plan.goal.type === 'drain') {
    // Its nodes take no new stream from here on; the plan, not the drain, moves theirs (none in flight of their own).
    for (const id of plan.goal.nodes) {
      const node = state.node(id);
      if (node && !node.draining) state.putNode({ ...node, draining: true, drainInFlight: 0, drainCause: cause });
    }
  }
  state.startRebalance(plan.moves ?? [], plan.limits.maxConcurrent, cause, { id: plan.id, paced: plan.limits.movesPerSecond !== undefined });
  const { moves: _moves, ...rest } = plan;
  state.plans.put({ ...rest, status: 'running', executedAt: ctx.position.index, cause });
  const started = launch();
  return decided(state, plan.id, withStarted({ ok: true }, started));
}

export function setPlanLimits(state: StreamMetadata, c: Command<'set-plan-limits'>, reject: Reject, launch: Launch): StreamResult {
  const plan = findPlan(state, c.plan, reject);
  if ('ok' in plan) return plan;
  if (plan.status === 'completed' || plan.status === 'cancelled') return reject('plan_ended', `plan ${plan.id} has ended (${plan.status}): its limits no longer matter`);
  const limits = { ...plan.limits, ...(c.maxConcurrent !== undefined ? { maxConcurrent: c.maxConcurrent } : {}) };
  if (c.movesPerSecond === null) delete limits.movesPerSecond;
  else if (c.movesPerSecond !== undefined) limits.movesPerSecond = c.movesPerSecond;
  if (limits.maxConcurrent === plan.limits.maxConcurrent && limits.movesPerSecond === plan.limits.movesPerSecond) return decided(state, plan.id, { ok: true, duplicate: true });
  state.plans.put({ ...plan, limits });
  if (plan.status !== 'running' || state.rebalanceQueue?.plan !== plan.id) return decided(state, plan.id, { ok: true });
  // Moves in flight above a lowered bound finish; no new one starts until the plan is below it.
  state.rebalanceQueue!.setLimits(limits.maxConcurrent, limits.movesPerSecond !== undefined);
  return decided(state, plan.id, withStarted({ ok: true }, launch()));
}

export function cancelPlan(state: StreamMetadata, c: Command<'cancel-plan'>, ctx: ApplyContext, seal: AuditSeal, reject: Reject): StreamResult {
  const plan = findPlan(state, c.plan, reject);
  if ('ok' in plan) return plan;
  if (plan.status === 'cancelled') return decided(state, plan.id, { ok: true, duplicate: true });
  if (plan.status === 'completed') return reject('plan_ended', `plan ${plan.id} has completed: nothing to stop`);
  const { moves: _moves, ...rest } = plan;
  if (plan.status === 'planned') {
    state.plans.put({ ...rest, status: 'cancelled', endedAt: ctx.position.index });
    return decided(state, plan.id, { ok: true });
  }
  const queue = state.rebalanceQueue?.plan === plan.id ? state.rebalanceQueue : undefined;
  const tallies = queue?.talliesNow();
  const dropped = queue?.dropWaiting() ?? 0;
  state.plans.put({ ...rest, status: 'cancelled', endedAt: ctx.position.index, tallies: { started: tallies?.started ?? 0, skipped: tallies?.skipped ?? 0, dropped } });
  seal.seal({
    kind: 'plan_cancelled',
    subject_type: 'cluster',
    subject: CLUSTER_SUBJECT,
    actor: c.actor ?? 'system:admin',
    reason: `${plan.id}: ${dropped} moves not started are dropped; ${state.rebalancesInFlight} in flight finish`,
    ...(plan.cause ? { cause: plan.cause } : {}),
  });
  return decided(state, plan.id, { ok: true });
}

/** The leader's pacer lets a paced plan start `moves` more (at most a second's worth held unused). */
export function allowPlanMoves(state: StreamMetadata, c: Command<'allow-plan-moves'>, launch: Launch): StreamResult {
  const plan = state.plans.get(c.plan);
  const pace = plan?.limits.movesPerSecond;
  if (!plan || plan.status !== 'running' || pace === undefined || state.rebalanceQueue?.plan !== plan.id) return { ok: true, duplicate: true };
  state.rebalanceQueue!.allow(c.moves, allowanceCap(pace));
  return decided(state, plan.id, withStarted({ ok: true }, launch()));
}

/**
 * Ends the running plan once nothing of it waits or is in flight (called after every launch:
 * O(plans)). A completed drain plan hands its nodes to their own drain at the default bound, so
 * whatever it could not move (unplaceable then, or back since) still leaves: answers whether it
 * did, so the caller launches their transfers.
 */
export function settlePlan(state: StreamMetadata, ctx: ApplyContext): boolean {
  const plan = state.plans.running();
  if (!plan) return false;
  const queue = state.rebalanceQueue?.plan === plan.id ? state.rebalanceQueue : undefined;
  if (queue && (queue.waiting > 0 || state.rebalancesInFlight > 0)) return false;
  const tallies = queue?.talliesNow();
  state.plans.put({ ...plan, status: 'completed', endedAt: ctx.position.index, tallies: { started: tallies?.started ?? 0, skipped: tallies?.skipped ?? 0, dropped: 0 } });
  let handed = false;
  if (plan.goal.type === 'drain') {
    for (const id of plan.goal.nodes) {
      const node = state.node(id);
      if (node?.draining && node.drainInFlight === 0) {
        state.putNode({ ...node, drainInFlight: DEFAULT_DRAIN_IN_FLIGHT });
        handed = true;
      }
    }
  }
  return handed;
}

