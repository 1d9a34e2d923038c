import type { NodeId, PlannedMove, StreamId } from './model.js';

/**
 * Plans as objects (`POST /v1/admin/plans`): a goal planned against the metadata inside `apply`,
 * kept in the replicated state with its moves and its predicted effect, run later at limits the
 * operator can change while it runs. Every member holds the same plans, so any member shows,
 * executes, throttles or stops one, and a new leader carries a running plan on.
 */

/** What a plan is for: even out streams per node, empty some nodes, or bring streams back to the labels they prefer. */
export type PlanGoal = { type: 'rebalance' } | { type: 'drain'; nodes: NodeId[] } | { type: 'restore-preferences' };

export interface PlanLimits {
  /** Moves of the plan in flight at once. */
  maxConcurrent: number;
  /** Moves started per second at most; absent: as fast as `maxConcurrent` allows. */
  movesPerSecond?: number;
}

export type PlanStatus = 'planned' | 'running' | 'completed' | 'cancelled';

/** Streams on a node, or on the nodes that carry one label value, before and after the plan. */
export interface NodeEffect {
  node: NodeId;
  before: number;
  after: number;
  out: number;
  in: number;
}
export interface LabelEffect {
  label: string;
  value: string;
  before: number;
  after: number;
}
export interface ViolationCount {
  before: number;
  after: number;
}

/** What the plan is predicted to do, computed when it was planned (the metadata of that moment). */
export interface PlanEffect {
  byNode: NodeEffect[];
  byLabel: LabelEffect[];
  violations: {
    /** Streams whose owner lacks a label their placement requires. */
    required: ViolationCount;
    /** Streams with preferred labels whose owner lacks one of them. */
    preferences: ViolationCount;
    /** Of the spread groups the plan moves streams of, those with one label value more than one stream above another. */
    spread: ViolationCount;
  };
  /** Streams the goal wanted to move that no node can take as their placement asks (at most 100 named). */
  unplaceable: StreamId[];
  unplaceableCount: number;
}

/** Tallies of a run, kept on the plan once it has ended (while it runs, the run holds them). */
export interface PlanTallies {
  started: number;
  skipped: number;
  /** Moves still waiting when the plan was cancelled: never started. */
  dropped: number;
}

export interface PlanRecord {
  id: string;
  goal: PlanGoal;
  limits: PlanLimits;
  status: PlanStatus;
  /** Log index of its creation (the view it was planned on: executing it once a later command changed the view is refused, 412), and of its execution and end when they happened. */
  createdAt: number;
  executedAt?: number;
  endedAt?: number;
  actor: string;
  planned: number;
  /** The moves, while it waits to be executed (then the run's queue holds them). */
  moves?: PlannedMove[];
  effect: PlanEffect;
  tallies?: PlanTallies;
  /** The audit record its moves name as their cause, once executed. */
  cause?: string;
}

/** Plans kept, newest first; the oldest that is not running is forgotten past this. */
export const MAX_PLANS = 16;
/** Plans waiting to be executed with their moves (each up to a move per stream); the oldest is forgotten past this. */
export const MAX_WAITING_PLANS = 4;

/**
 * The plans of the replicated state, by creation. Records are replaced, never changed in place,
 * so a copy of the book shares them (copy on write, like the metadata's other records).
 */
export class PlanBook {
  private constructor(private readonly plans: PlanRecord[] = []) {}

  static empty(): PlanBook {
    return new PlanBook();
  }

  static of(records: readonly PlanRecord[]): PlanBook {
    return new PlanBook(records.map((record) => structuredClone(record)));
  }

  get(id: string): PlanRecord | undefined {
    return this.plans.find((plan) => plan.id === id);
  }

  /** The plan under way, if any (one at a time). */
  running(): PlanRecord | undefined {
    return this.plans.find((plan) => plan.status === 'running');
  }

  /** Newest first. */
  list(): PlanRecord[] {
    return [...this.plans].reverse();
  }

  /** Oldest first: the snapshot order. */
  records(): readonly PlanRecord[] {
    return this.plans;
  }

  /** Adds a plan, forgetting the oldest waiting one past MAX_WAITING_PLANS and the oldest ended one past MAX_PLANS. */
  add(plan: PlanRecord): void {
    this.plans.push(plan);
    while (this.plans.filter((p) => p.status === 'planned').length > MAX_WAITING_PLANS) this.forgetOldest((p) => p.status === 'planned');
    while (this.plans.length > MAX_PLANS && this.forgetOldest((p) => p.status !== 'running'));
  }

  put(plan: PlanRecord): void {
    const at = this.plans.findIndex((p) => p.id === plan.id);
    if (at >= 0) this.plans[at] = plan;
  }

  clone(): PlanBook {
    return new PlanBook([...this.plans]);
  }

  private forgetOldest(which: (plan: PlanRecord) => boolean): boolean {
    const at = this.plans.findIndex(which);
    if (at < 0) return false;
    this.plans.splice(at, 1);
    return true;
  }
}

/** Moves a paced plan may hold unused: a second's worth, and at least one (so a pace below one a second still moves). */
export function allowanceCap(movesPerSecond: number): number {
  return Math.max(1, Math.ceil(movesPerSecond));
}
