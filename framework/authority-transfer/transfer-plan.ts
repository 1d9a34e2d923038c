import type { CommitPlannedTransferCommand } from './ownership.js';

/**
 * The lifecycle of one planned transfer (seed 003, "States and cancellation"). Committed and
 * Abandoned are outcomes; Committing lives in memory only and is not one.
 */
export type PlanState = 'AwaitingCatchUp' | 'Ready' | 'Committing' | 'Committed' | 'Abandoned';

export interface TransferRequest {
  /** The transfer identity: the Idempotency-Key, given or minted. */
  id: string;
  authority: string;
  source: string;
  target: string;
  /** The authenticated principal who ordered the move (never taken from the body). */
  actor: string;
  reason: string;
}

/**
 * One transfer in flight. Every state change is a synchronous check-and-set: in a single-threaded
 * runtime a synchronous section is the plan lock, and it is the only thing a commit holds it
 * for. Nothing here waits, so a cancel is always answered from the plan at once.
 */
export class TransferPlan {
  state: PlanState = 'AwaitingCatchUp';
  /** Highest applied serial the target reported; folded monotonically. */
  frontier: number | undefined;
  /** When the latest reading (with or without a frontier) arrived. */
  lastReadingAt: number | undefined;
  /**
   * Claimed, then a consensus round trip ended without a known outcome. Sticky until the plan
   * resolves: once an attempt may have appended, no later refusal proves nothing will commit.
   */
  unresolved = false;
  /** Background resolution attempts made so far. */
  resolutionAttempts: number | undefined;
  /** The unknown outcome was counted in the metrics already. */
  countedUnknown = false;
  /** The run currently driving the plan, shared by duplicate requests under the same key. */
  run: Promise<unknown> | undefined;
  private readonly controller = new AbortController();

  constructor(
    readonly request: TransferRequest,
    /** This member's metadata serial when the transfer was started. */
    readonly barrier: number,
    readonly createdAt: number,
    readonly deadline: number,
  ) {}

  get id(): string {
    return this.request.id;
  }

  get authority(): string {
    return this.request.authority;
  }

  /** Aborted when the plan is abandoned: ends any probe or wait the run is in. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Folds a probe reading into the plan. Monotonic: a lower or missing reading (out of order,
   * unreachable target) never lowers the frontier nor un-readies the plan.
   */
  fold(reading: number | undefined, at: number): void {
    this.lastReadingAt = at;
    if (reading === undefined) return;
    if (this.frontier === undefined || reading > this.frontier) this.frontier = reading;
    if (this.state === 'AwaitingCatchUp' && this.frontier >= this.barrier) this.state = 'Ready';
  }

  // Methods rather than property reads, because the state changes across awaits and the
  // compiler would otherwise narrow a re-read away.
  isAbandoned(): boolean {
    return this.state === 'Abandoned';
  }

  isAwaitingCatchUp(): boolean {
    return this.state === 'AwaitingCatchUp';
  }

  /** Ready -> Committing. False when the plan is anywhere else (cancelled, already claimed). */
  claim(): boolean {
    if (this.state !== 'Ready') return false;
    this.state = 'Committing';
    return true;
  }

  /** Committing -> Ready after a refusal proving nothing under this key can commit. */
  release(): void {
    if (this.state !== 'Committing') return;
    this.state = 'Ready';
    this.unresolved = false;
  }

  /** Abandons a plan that has not been claimed; false from the claim onward. */
  abandon(why: string): boolean {
    if (this.state !== 'AwaitingCatchUp' && this.state !== 'Ready') return false;
    this.state = 'Abandoned';
    this.controller.abort(new Error(why));
    return true;
  }

  markCommitted(): void {
    this.state = 'Committed';
    this.unresolved = false;
  }

  /** True when `other` asks for the same move (what a retry under the same key must do). */
  sameRequest(other: TransferRequest): boolean {
    const r = this.request;
    return r.authority === other.authority && r.source === other.source && r.target === other.target && r.reason === other.reason;
  }

  command(): CommitPlannedTransferCommand {
    const { id, authority, source, target, actor, reason } = this.request;
    return { type: 'commit_planned_transfer', id, authority, source, target, actor, reason, barrier: this.barrier };
  }
}
