import type { FrontierReading } from './frontier-probe.js';
import type { CommitPlannedTransferCommand, TransferIntent } from './ownership.js';
import { type CoreEvent, type PlanCursor, type PlanState, TransferCore } from './transfer-core.js';

export type { PlanCursor, PlanState } from './transfer-core.js';

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

/**
 * One transfer driven by this member: the local driver's handle on a transfer registered in the
 * replicated state. Its lifecycle is the pure TransferCore (every change is one `step`, a
 * synchronous check-and-set: in a single-threaded runtime a synchronous section is the plan
 * lock, and it is the only thing a commit holds it for); what the core cannot hold (the run's
 * promise, the abort signal that ends its waits) lives here. Nothing here waits, so a cancel is
 * always answered from the plan at once.
 */
export class TransferPlan {
  readonly core: TransferCore;
  /** The registration reached the replicated state (this member drives it): see markRegistered. */
  registered = false;
  private announceRegistered: (() => void) | undefined;
  /** Resolves once its key's registration reached the replicated state, by this member or another (what a scheduled POST answers after). */
  readonly registeredOnce = new Promise<void>((resolve) => (this.announceRegistered = resolve));
  /** Another member drives the registered transfer under this key: this plan only follows it. */
  follower = false;
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
    options: { freezeBudgetMs: number; violations?: string[] } = { freezeBudgetMs: 5_000 },
  ) {
    this.core = new TransferCore(request.id, deadline, options);
    this.violations = options.violations;
  }

  /** Where the driver keeps what the core found broken, past the plan's run. */
  private readonly violations: string[] | undefined;

  /** Feeds one event to the core; a plan the event abandoned ends its run's waits at once. */
  step(event: CoreEvent): boolean {
    const wasAbandoned = this.core.state === 'Abandoned';
    const found = this.core.violations.length;
    const accepted = this.core.step(event);
    if (!wasAbandoned && this.core.state === 'Abandoned') this.controller.abort(new Error(this.core.abandonedBecause));
    for (const violation of this.core.violations.slice(found)) {
      if (this.violations && this.violations.length < 16) this.violations.push(`transfer ${this.id}: ${violation}`);
    }
    return accepted;
  }

  // What the core holds, read (and, for tests that build a plan in a given state, written) here.
  get state(): PlanState {
    return this.core.state;
  }
  set state(state: PlanState) {
    this.core.state = state;
  }
  get cursors(): PlanCursor[] {
    return this.core.cursors;
  }
  set cursors(cursors: PlanCursor[]) {
    this.core.cursors = cursors;
  }
  get frozenAt(): number | undefined {
    return this.core.frozenAt;
  }
  set frozenAt(at: number | undefined) {
    this.core.frozenAt = at;
  }
  get frozenSince(): number | undefined {
    return this.core.frozenSince;
  }
  get fresh(): boolean {
    return this.core.fresh;
  }
  get unresolved(): boolean {
    return this.core.unresolved;
  }
  get lastReadingAt(): number | undefined {
    return this.core.lastReadingAt;
  }
  /** When the run gives up (504); the registered transfer's own deadline once it joins one. */
  get deadline(): number {
    return this.core.deadline;
  }
  /** What ended an abandoned plan, when that was not a cancel (see `abandon`). */
  get endedBy(): Error | undefined {
    return this.core.endedBy as Error | undefined;
  }

  /**
   * The plan drives a registration made earlier under its key (by a run before a restart): that
   * registration's deadline is the one every member expires it by, so the run keeps it too.
   */
  joinDeadline(registered: number): void {
    this.core.deadline = Math.min(this.core.deadline, registered);
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

  get barrier(): number {
    return this.core.barrier;
  }

  get frontier(): number | undefined {
    return this.core.frontier;
  }

  get frozen(): boolean {
    return this.core.frozen;
  }

  /** Aborted when the plan is abandoned: ends any probe or wait the run is in. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the plan was abandoned (what the log says of a run that answered "cancelled"). */
  get abandonedBecause(): string | undefined {
    return this.state === 'Abandoned' ? this.core.abandonedBecause : undefined;
  }

  follow(intent: TransferIntent): void {
    this.step({ type: 'applied', intent });
  }

  fold(readings: readonly (FrontierReading | undefined)[], at: number): void {
    this.step({ type: 'probe_read', readings, at });
  }

  needsReading(): boolean {
    return this.core.needsReading();
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
    return this.step({ type: 'claim' });
  }

  /** Committing -> Ready after a refusal proving nothing under this key can commit. */
  release(): void {
    this.step({ type: 'proposed', command: 'commit', outcome: 'refused' });
  }

  /**
   * Abandons a plan that has not been claimed; false from the claim onward. `answer` is what its
   * run answers when something other than a cancel ended it (its registration expired, a
   * failover moved the authority); without one, the run answers "cancelled".
   */
  abandon(why: string, answer?: Error): boolean {
    return this.step({ type: 'cancel', why, answer });
  }

  /** An operator's cancel, answered 204 from the plan: its commit is never proposed after it. */
  cancel(why: string): boolean {
    return this.step({ type: 'cancel', why, cancel: true });
  }

  /** A claimed plan whose transfer was released in the replicated state: it can never commit. */
  abandonClaimed(why: string): void {
    this.step({ type: 'released', why });
  }

  markCommitted(): void {
    this.step({ type: 'proposed', command: 'commit', outcome: 'committed' });
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
