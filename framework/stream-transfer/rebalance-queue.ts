import type { PlannedMove } from './model.js';

/** A rebalance in progress as operators see it: the moves still waiting, and the tallies. */
export interface RebalanceRun {
  /** Moves not started yet, in plan order. */
  queue: PlannedMove[];
  maxInFlight: number;
  planned: number;
  started: number;
  /** Moves dropped because they were no longer valid when their turn came. */
  skipped: number;
  /** The id of the audit record of the plan: what each move's record names as its cause. */
  cause?: string;
  /** The plan object (POST /v1/admin/plans) this run executes, if it came from one. */
  plan?: string;
  /** A paced run: moves it may still start before the pacer allows more (absent: unpaced). */
  allowance?: number;
}

export type RebalanceTallies = Omit<RebalanceRun, 'queue'>;

/**
 * The moves of the current rebalance (or executed plan) waiting for the in-flight bound, in plan
 * order, with its tallies. Part of the replicated metadata: `apply` takes moves from it as
 * transfers settle. The moves array is never changed in place once a copy may share it (taking a
 * move advances `next`; dropping replaces the array), so `clone()` is O(1).
 */
export class RebalanceQueue {
  private constructor(
    private moves: PlannedMove[],
    private next: number,
    private tallies: RebalanceTallies,
  ) {}

  /** A new run of `moves`; `plan` names the plan object it executes, `paced` starts it with no allowance. */
  static start(moves: PlannedMove[], maxInFlight: number, cause?: string, plan?: { id: string; paced: boolean }): RebalanceQueue {
    return new RebalanceQueue(moves, 0, {
      planned: moves.length,
      maxInFlight,
      started: 0,
      skipped: 0,
      ...(cause ? { cause } : {}),
      ...(plan ? { plan: plan.id, ...(plan.paced ? { allowance: 0 } : {}) } : {}),
    });
  }

  /** A run read back from a snapshot: its tallies, then (possibly in parts) its waiting moves. */
  static restore(tallies: RebalanceTallies, waiting: readonly PlannedMove[] = []): RebalanceQueue {
    return new RebalanceQueue(
      waiting.map((m) => ({ stream: m.stream, target: m.target })),
      0,
      {
        planned: tallies.planned,
        maxInFlight: tallies.maxInFlight,
        started: tallies.started,
        skipped: tallies.skipped,
        ...(tallies.cause ? { cause: tallies.cause } : {}),
        ...(tallies.plan ? { plan: tallies.plan } : {}),
        ...(tallies.allowance !== undefined ? { allowance: tallies.allowance } : {}),
      },
    );
  }

  clone(): RebalanceQueue {
    return new RebalanceQueue(this.moves, this.next, { ...this.tallies });
  }

  get waiting(): number {
    return this.moves.length - this.next;
  }

  get maxInFlight(): number {
    return this.tallies.maxInFlight;
  }

  get cause(): string | undefined {
    return this.tallies.cause;
  }

  get plan(): string | undefined {
    return this.tallies.plan;
  }

  /** Whether one more move may start now (a paced run needs allowance). */
  get mayStart(): boolean {
    return this.tallies.allowance !== 0;
  }

  /** The tallies, a copy. */
  talliesNow(): RebalanceTallies {
    return { ...this.tallies };
  }

  /** The waiting moves without copying them: from `next` on. */
  parts(): { tallies: RebalanceTallies; moves: readonly PlannedMove[]; next: number } {
    return { tallies: this.talliesNow(), moves: this.moves, next: this.next };
  }

  /** As operators see it (copies the waiting moves: not for `apply`). */
  run(): RebalanceRun {
    return { queue: this.moves.slice(this.next), ...this.talliesNow() };
  }

  /** Takes the next waiting move, if any. */
  take(): PlannedMove | undefined {
    if (this.next >= this.moves.length) return undefined;
    const move = this.moves[this.next]!;
    this.next += 1;
    // Taken moves are not needed again; drop them once they are the larger part (amortised O(1)).
    if (this.next > 1024 && this.next * 2 > this.moves.length) {
      this.moves = this.moves.slice(this.next);
      this.next = 0;
    }
    return move;
  }

  count(outcome: 'started' | 'skipped'): void {
    this.tallies[outcome] += 1;
    if (outcome === 'started' && this.tallies.allowance !== undefined) this.tallies.allowance = Math.max(0, this.tallies.allowance - 1);
  }

  /** Changes the limits while it runs: its in-flight bound, and whether it is paced. */
  setLimits(maxInFlight: number, paced: boolean): void {
    this.tallies.maxInFlight = maxInFlight;
    if (paced) this.tallies.allowance = this.tallies.allowance ?? 0;
    else delete this.tallies.allowance;
  }

  /** A paced run may start `moves` more, holding at most `cap` unused (time not used is not saved up). */
  allow(moves: number, cap: number): void {
    if (this.tallies.allowance !== undefined) this.tallies.allowance = Math.min(cap, this.tallies.allowance + moves);
  }

  /** Drops the moves not started yet (a cancelled plan); answers how many. */
  dropWaiting(): number {
    const dropped = this.waiting;
    this.moves = [];
    this.next = 0;
    return dropped;
  }

  /** Adds waiting moves while a state is being assembled (no copy shares the array yet). */
  append(waiting: readonly PlannedMove[]): void {
    for (const m of waiting) this.moves.push({ stream: m.stream, target: m.target });
  }
}
