import type { FeedOrigin } from './change-feed.js';
import type { FrontierReading } from './frontier-probe.js';
import type { CommitPlannedTransferCommand, TransferIntent } from './ownership.js';

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
  /**
   * Register the transfer only while the authority is at this epoch (the operator's If-Match);
   * checked by the state machine at registration, and not part of what the key identifies.
   */
  expectedEpoch?: number;
  /**
   * A scheduled transfer (ms, the driver's clock): registered at once, so it holds the
   * authority's one transfer and can be cancelled, but it reads the target and freezes nothing
   * before `notBefore`; past `notAfter` (its deadline) it is abandoned with no audit, like a
   * budget timeout. Neither is part of what the key identifies.
   */
  notBefore?: number;
  notAfter?: number;
}

/** One source member's feed as the plan catches the target up on it. */
export interface PlanCursor {
  origin: FeedOrigin;
  /** What the target must apply of this feed: the barrier, then the final serial once frozen. */
  barrier: number;
  /** Highest applied serial the target reported for this feed; folded monotonically within one replica. */
  frontier: number | undefined;
  /** The target's replica storage the frontier was read from (see FrontierReading). */
  replica: string | undefined;
}

/**
 * One transfer driven by this member: the local driver of a transfer registered in the
 * replicated state. Every state change is a synchronous check-and-set: in a single-threaded
 * runtime a synchronous section is the plan lock, and it is the only thing a commit holds it
 * for. Nothing here waits, so a cancel is always answered from the plan at once.
 */
export class TransferPlan {
  state: PlanState = 'AwaitingCatchUp';
  /** The source feeds the target must catch up on (one per member of the source datacenter). */
  cursors: PlanCursor[] = [];
  /** When the latest reading (with or without a frontier) arrived. */
  lastReadingAt: number | undefined;
  /** The registration reached the replicated state (this member drives it): see markRegistered. */
  registered = false;
  private announceRegistered: (() => void) | undefined;
  /** Resolves once its key's registration reached the replicated state, by this member or another (what a scheduled POST answers after). */
  readonly registeredOnce = new Promise<void>((resolve) => (this.announceRegistered = resolve));
  /** The replicated freeze this plan holds (its generation), once every final serial is in. */
  frozenAt: number | undefined;
  /** When the current freeze was committed (this member's clock), for the freeze window. */
  frozenSince: number | undefined;
  /**
   * Every cursor was read since the cursors were last taken from the registration: the claim
   * waits for such a reading, so the target is probed again after the freeze, just before it.
   */
  fresh = false;
  /** Another member drives the registered transfer under this key: this plan only follows it. */
  follower = false;
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
    readonly createdAt: number,
    deadline: number,
  ) {
    this.deadline = deadline;
  }

  /** When the run gives up (504); the registered transfer's own deadline once it joins one. */
  deadline: number;

  /**
   * The plan drives a registration made earlier under its key (by a run before a restart): that
   * registration's deadline is the one every member expires it by, so the run keeps it too.
   */
  joinDeadline(registered: number): void {
    this.deadline = Math.min(this.deadline, registered);
  }

  markRegistered(): void {
    this.registered = true;
    this.announceRegistered?.();
  }

  /** Its key is registered by another member, which drives it: this plan only follows it. */
  markFollowing(): void {
    this.follower = true;
    this.announceRegistered?.();
  }

  get id(): string {
    return this.request.id;
  }

  get authority(): string {
    return this.request.authority;
  }

  /** The barrier as the audit records it: the highest serial the target must apply. */
  get barrier(): number {
    let barrier = 0;
    for (const cursor of this.cursors) barrier = Math.max(barrier, cursor.barrier);
    return barrier;
  }

  /** The lowest frontier over the source feeds (the only one, usually); undefined without a reading of each. */
  get frontier(): number | undefined {
    let frontier: number | undefined;
    for (const cursor of this.cursors) {
      if (cursor.frontier === undefined) return undefined;
      frontier = frontier === undefined ? cursor.frontier : Math.min(frontier, cursor.frontier);
    }
    return frontier;
  }

  get frozen(): boolean {
    return this.frozenAt !== undefined;
  }

  /** Aborted when the plan is abandoned: ends any probe or wait the run is in. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the plan was abandoned (what the log says of a run that answered "cancelled"). */
  get abandonedBecause(): string | undefined {
    const reason: unknown = this.controller.signal.reason;
    return reason instanceof Error ? reason.message : undefined;
  }

  /**
   * Takes the registered transfer's cursors: barriers (or, frozen with every final recorded,
   * the finals). A frontier read in the same incarnation is kept; the check is monotonic.
   */
  follow(intent: TransferIntent): void {
    const complete = intent.frozen && intent.sources.every((s) => s.final !== undefined);
    const previous = new Map(this.cursors.map((c) => [`${c.origin.member}|${c.origin.incarnation}`, c]));
    this.cursors = intent.sources.map((s) => {
      const kept = previous.get(`${s.member}|${s.incarnation}`);
      return {
        origin: { member: s.member, incarnation: s.incarnation },
        barrier: complete ? s.final! : s.barrier,
        frontier: kept?.frontier,
        replica: kept?.replica,
      };
    });
    this.frozenAt = complete ? intent.freezes : undefined;
    this.fresh = false;
    if (this.state === 'Ready' && !this.reached()) this.state = 'AwaitingCatchUp';
    if (this.state === 'AwaitingCatchUp' && this.reached()) this.state = 'Ready';
  }

  /**
   * Folds probe readings (one per cursor, in order) into the plan. Monotonic within one replica:
   * a lower or missing reading (out of order, unreachable target) never lowers a frontier nor
   * un-readies the plan. A reading from another replica storage (the target lost its disk, or
   * its replica was reset) replaces the frontier, which may then go backwards and un-ready the
   * plan: what the old files held is gone.
   */
  fold(readings: readonly (FrontierReading | undefined)[], at: number): void {
    this.lastReadingAt = at;
    let complete = true;
    for (const [i, cursor] of this.cursors.entries()) {
      const reading = readings[i];
      if (reading === undefined) {
        complete = false;
        continue;
      }
      if (cursor.replica !== reading.replica) {
        cursor.frontier = reading.serial;
        cursor.replica = reading.replica;
      } else if (cursor.frontier === undefined || reading.serial > cursor.frontier) {
        cursor.frontier = reading.serial;
      }
    }
    if (complete) this.fresh = true;
    if (this.state === 'Ready' && !this.reached()) this.state = 'AwaitingCatchUp';
    if (this.state === 'AwaitingCatchUp' && this.reached()) this.state = 'Ready';
  }

  /** The run must probe before going on: still catching up, or Ready on readings older than the cursors. */
  needsReading(): boolean {
    return this.state === 'AwaitingCatchUp' || (this.state === 'Ready' && !this.fresh);
  }

  private reached(): boolean {
    return this.cursors.every((c) => c.frontier !== undefined && c.frontier >= c.barrier);
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

  /**
   * Abandons a plan that has not been claimed; false from the claim onward. `answer` is what its
   * run answers when something other than a cancel ended it (its registration expired, a
   * failover moved the authority); without one, the run answers "cancelled".
   */
  abandon(why: string, answer?: Error): boolean {
    if (this.state !== 'AwaitingCatchUp' && this.state !== 'Ready') return false;
    this.state = 'Abandoned';
    this.endedBy = answer;
    this.controller.abort(new Error(why));
    return true;
  }

  /** What ended an abandoned plan, when that was not a cancel (see `abandon`). */
  endedBy: Error | undefined;

  /** A claimed plan whose transfer was released in the replicated state: it can never commit. */
  abandonClaimed(why: string): void {
    this.state = 'Abandoned';
    this.unresolved = false;
    this.controller.abort(new Error(why));
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
