import type { PlannedMoveFrom } from './model.js';
import type { PlanEffect, PlanGoal, PlanLimits, PlanRecord, PlanStatus } from './plan-record.js';
import { MOVES_SHOWN } from './rebalance-preview.js';
import type { StreamMetadata } from './stream-metadata.js';

/** Where a plan's run stands: moves started, settled, in flight, waiting, and what it did not start. */
export interface PlanProgress {
  started: number;
  /** Started moves that have settled. */
  done: number;
  inFlight: number;
  waiting: number;
  /** Moves no longer valid when their turn came (the stream moved or its target filled meanwhile). */
  skipped: number;
  /** Moves a cancel dropped before they started. */
  dropped: number;
}

/** A plan as the admin API lists it. */
export interface PlanSummary {
  id: string;
  goal: PlanGoal;
  limits: { maxConcurrent: number; movesPerSecond: number | null };
  status: PlanStatus;
  /** The log index it was planned at (its view of the metadata), and whether a later command changed that view (execute would answer 412). */
  view: number;
  stale: boolean;
  planned: number;
  actor: string;
  /** The audit record of its execution, which its moves' records name as their cause; null until executed. */
  cause: string | null;
  progress: PlanProgress;
}

/** A plan as the admin API shows it: its first moves (waiting ones once it runs) and its predicted effect. */
export interface PlanView extends PlanSummary {
  moves: PlannedMoveFrom[];
  truncated: boolean;
  effect: PlanEffect;
}

function limitsOf(limits: PlanLimits): PlanSummary['limits'] {
  return { maxConcurrent: limits.maxConcurrent, movesPerSecond: limits.movesPerSecond ?? null };
}

/** O(1): tallies the replicated run keeps, or the plan kept when it ended. */
function progressOf(state: StreamMetadata, plan: PlanRecord): PlanProgress {
  const queue = state.rebalanceQueue?.plan === plan.id ? state.rebalanceQueue : undefined;
  // Moves of an ended plan may still be settling (a cancel lets those in flight finish).
  const inFlight = queue && plan.status !== 'completed' ? state.rebalancesInFlight : 0;
  if (plan.status === 'planned') return { started: 0, done: 0, inFlight: 0, waiting: plan.planned, skipped: 0, dropped: 0 };
  const tallies = plan.tallies ?? queue?.talliesNow();
  const started = tallies?.started ?? 0;
  return {
    started,
    done: started - inFlight,
    inFlight,
    waiting: plan.status === 'running' ? (queue?.waiting ?? 0) : 0,
    skipped: tallies?.skipped ?? 0,
    dropped: plan.tallies?.dropped ?? 0,
  };
}

export function planSummary(state: StreamMetadata, plan: PlanRecord): PlanSummary {
  return {
    id: plan.id,
    goal: plan.goal,
    limits: limitsOf(plan.limits),
    status: plan.status,
    view: plan.createdAt,
    stale: plan.status === 'planned' && state.viewAt > plan.createdAt,
    planned: plan.planned,
    actor: plan.actor,
    cause: plan.cause ?? null,
    progress: progressOf(state, plan),
  };
}

/** O(nodes + MOVES_SHOWN): the effect is bounded by the nodes and label values, the moves by MOVES_SHOWN. */
export function planView(state: StreamMetadata, plan: PlanRecord): PlanView {
  const summary = planSummary(state, plan);
  const waiting = plan.status === 'planned' ? (plan.moves ?? []) : plan.status === 'running' ? waitingMoves(state, plan.id) : [];
  const moves = waiting.slice(0, MOVES_SHOWN).map((move) => ({ ...move, source: state.stream(move.stream)?.owner ?? null }));
  return { ...summary, moves, truncated: summary.progress.waiting > moves.length, effect: plan.effect };
}

function waitingMoves(state: StreamMetadata, plan: string): readonly { stream: string; target: string }[] {
  const parts = state.rebalanceParts();
  if (!parts || parts.tallies.plan !== plan) return [];
  return parts.moves.slice(parts.next, parts.next + MOVES_SHOWN);
}
