import type { FeedOrigin } from './change-feed.js';
import type { FrontierReading } from './frontier-probe.js';
import type { TransferIntent } from './ownership.js';

/**
 * The lifecycle of one planned transfer (seed 003, "States and cancellation"). Committed and
 * Abandoned are outcomes; Committing lives in memory only and is not one.
 */
export type PlanState = 'AwaitingCatchUp' | 'Ready' | 'Committing' | 'Committed' | 'Abandoned';

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

/** How a proposal of the plan's own came back, as far as the plan's state is concerned. */
export type ProposalOutcome =
  /** A freeze applied at `at` (the driver's clock): the freeze window starts. */
  | { command: 'freeze'; outcome: 'applied'; at: number }
  /** A thaw applied (or was refused with the registration still there): no freeze window runs. */
  | { command: 'thaw'; outcome: 'applied' }
  /**
   * A freeze or thaw whose proposal failed or whose outcome is unknown, or a thaw proposed in the
   * background for a plan left without a run: either way the plan holds no freeze.
   */
  | { command: 'freeze' | 'thaw'; outcome: 'failed' | 'lifted' }
  /** The commit applied: the move is sealed. */
  | { command: 'commit'; outcome: 'committed' }
  /** A refusal proving nothing under the key can commit: the claim is given back. */
  | { command: 'commit'; outcome: 'refused' }
  /** The round trip ended without a known outcome: sticky until the plan resolves. */
  | { command: 'commit'; outcome: 'unknown' }
  /** The registration was gone when the commit applied: nothing can ever commit. */
  | { command: 'commit'; outcome: 'released'; why: string };

/** What happens to one transfer, fed to `step` by its driver. Time only ever arrives in an event. */
export type CoreEvent =
  /** The source members' serials were read (or could not be, `ok: false`) at `at`. */
  | { type: 'source_read'; at: number; ok: boolean }
  /** The registered transfer as this member applied it: its barriers, or the finals once frozen. */
  | { type: 'applied'; intent: TransferIntent }
  /** Probe readings, one per cursor in order (undefined: no frontier), arrived at `at`. */
  | { type: 'probe_read'; readings: readonly (FrontierReading | undefined)[]; at: number }
  | ({ type: 'proposed' } & ProposalOutcome)
  /** The driver's clock: past the deadline a plan still reading the target times out. */
  | { type: 'tick'; now: number }
  /**
   * Calls the plan off (a cancel, a failover, a shutdown). Refused from the claim onward.
   * `answer` is what its run answers when it was not an operator's cancel; `cancel` marks a
   * cancel answered 204 from the plan, after which its commit is never proposed.
   */
  | { type: 'cancel'; why: string; answer?: unknown; cancel?: boolean }
  /** Ready -> Committing: the synchronous check-and-set a commit holds the plan lock for. */
  | { type: 'claim' }
  /** A claimed plan's registration was released in the replicated state: it can never commit. */
  | { type: 'released'; why: string };

/** What the driver must do next for the plan; it feeds each result back with `step`. */
export type Effect =
  /**
   * Probe the target on every cursor until the plan no longer needs reading, or until `until`
   * (the deadline, or the end of the freeze window), on the normal or the freeze schedule.
   */
  | { type: 'probe'; until: number; schedule: 'catch_up' | 'frozen' }
  /** Propose a freeze, a thaw (the freeze window is spent) or the commit (the plan is claimed). */
  | { type: 'propose'; command: 'freeze' | 'thaw' | 'commit' }
  /** Release the registration in the background (the plan timed out). */
  | { type: 'release'; why: 'timed_out' }
  /** Answer the waiting request: the run ended (cancelled or released), or timed out. */
  | { type: 'answer'; outcome: 'ended' | 'timed_out' };

export interface TransferCoreOptions {
  /** How long a freeze may hold before it is lifted. */
  freezeBudgetMs: number;
}

/**
 * One planned transfer as a pure state machine, in the manner of etcd-io/raft's RawNode: no
 * Promise, no clock, no I/O. Its driver feeds it events with `step`, asks `ready()` what to do
 * next, performs it, and acknowledges with `advance()`. Every change of the plan's state goes
 * through `step`, and the invariants below are checked after every one.
 */
export class TransferCore {
  state: PlanState = 'AwaitingCatchUp';
  /** The source feeds the target must catch up on (one per member of the source datacenter). */
  cursors: PlanCursor[] = [];
  /** When the latest reading (with or without a frontier) arrived. */
  lastReadingAt: number | undefined;
  /** The replicated freeze this plan holds (its generation), once every final serial is in. */
  frozenAt: number | undefined;
  /** When the current freeze was committed (the driver's clock), for the freeze window. */
  frozenSince: number | undefined;
  /** Every cursor was read since the cursors were last taken from the registration. */
  fresh = false;
  /** Claimed, then a round trip ended without a known outcome: once in doubt, no refusal proves nothing commits. */
  unresolved = false;
  /** Why the plan was abandoned, and what its run answers when that was not a cancel. */
  abandonedBecause: string | undefined;
  endedBy: unknown;
  /** A cancel answered 204 from this plan: its commit must never be proposed after it. */
  cancelled = false;
  /** The plan's commit was proposed (its effect acknowledged) after a cancel answered 204: must never be. */
  commitAfterCancel = false;
  /** The driver's latest time, from `tick`. */
  now = -Infinity;
  /** Invariant violations found after a step, in words (the simulations fail on the first). */
  readonly violations: string[] = [];
  private timedOut = false;
  private pending: Effect[] | undefined;

  constructor(
    readonly id: string,
    /** When the run gives up (504); the registered transfer's own deadline once it joins one. */
    public deadline: number,
    private readonly options: TransferCoreOptions,
  ) {}

  get frozen(): boolean {
    return this.frozenAt !== undefined;
  }

  /** The barrier as the audit records it: the highest serial the target must apply. */
  get barrier(): number {
    let barrier = 0;
    for (const cursor of this.cursors) barrier = Math.max(barrier, cursor.barrier);
    return barrier;
  }

  /** The lowest frontier over the source feeds; undefined without a reading of each. */
  get frontier(): number | undefined {
    let frontier: number | undefined;
    for (const cursor of this.cursors) {
      if (cursor.frontier === undefined) return undefined;
      frontier = frontier === undefined ? cursor.frontier : Math.min(frontier, cursor.frontier);
    }
    return frontier;
  }

  /** The run must probe before going on: still catching up, or Ready on readings older than the cursors. */
  needsReading(): boolean {
    return this.state === 'AwaitingCatchUp' || (this.state === 'Ready' && !this.fresh);
  }

  /** Applies one event; false when the plan refused it (a cancel after the claim, a claim when not Ready). */
  step(event: CoreEvent): boolean {
    const accepted = this.apply(event);
    this.pending = undefined;
    for (const violation of transferCoreInvariants(this)) {
      if (this.violations.length < 16) this.violations.push(`after ${event.type}: ${violation}`);
    }
    return accepted;
  }

  /**
   * What the driver must do next, from the state alone; the same until `advance` acknowledges it
   * or an event changes the state. Empty for a plan with an outcome its run already answered.
   */
  ready(): Effect[] {
    this.pending ??= this.next();
    return this.pending;
  }

  /** The driver took the effects of the last `ready`: a commit it proposes claims the plan now. */
  advance(): void {
    const taken = this.pending ?? [];
    this.pending = [];
    for (const effect of taken) {
      if (effect.type === 'answer') this.timedOut = false;
      if (effect.type === 'propose' && effect.command === 'commit') {
        if (this.cancelled) this.commitAfterCancel = true;
        if (this.state === 'Ready') this.step({ type: 'claim' });
      }
    }
    this.pending = [];
  }

  private next(): Effect[] {
    if (this.state === 'Committed') return [];
    if (this.state === 'Abandoned') return this.timedOut ? [{ type: 'release', why: 'timed_out' }, { type: 'answer', outcome: 'timed_out' }] : [{ type: 'answer', outcome: 'ended' }];
    if (this.state === 'Committing') return [{ type: 'propose', command: 'commit' }];
    if (this.needsReading()) {
      const until = this.frozen ? Math.min(this.deadline, (this.frozenSince ?? 0) + this.options.freezeBudgetMs) : this.deadline;
      // The freeze held too long: writes resume, the target catches up on the finals unfrozen.
      if (this.frozen && this.now >= until && this.now < this.deadline) return [{ type: 'propose', command: 'thaw' }];
      return [{ type: 'probe', until, schedule: this.frozen ? 'frozen' : 'catch_up' }];
    }
    // Caught up on fresh readings: freeze the writes, then (holding every final) claim and commit.
    return [{ type: 'propose', command: this.frozen ? 'commit' : 'freeze' }];
  }

  private apply(event: CoreEvent): boolean {
    // A claim holds the readings and the freeze it was taken on: the commit in flight carries
    // them, and nothing learnt meanwhile changes what it asked for.
    const claimed = this.state === 'Committing' || this.state === 'Committed';
    if (claimed && (event.type === 'applied' || event.type === 'probe_read' || (event.type === 'proposed' && event.command !== 'commit'))) return false;
    switch (event.type) {
      case 'source_read':
        this.lastReadingAt = event.at;
        return true;
      case 'applied':
        this.follow(event.intent);
        return true;
      case 'probe_read':
        this.fold(event.readings, event.at);
        return true;
      case 'proposed':
        return this.proposed(event);
      case 'tick':
        this.now = Math.max(this.now, event.now);
        // Out of time while still reading the target: the transfer timed out (504), nothing moved.
        if (this.needsReading() && this.now >= this.deadline && this.abandon('catch-up budget exhausted')) this.timedOut = true;
        return true;
      case 'cancel':
        if (!this.abandon(event.why, event.answer)) return false;
        this.cancelled = event.cancel === true;
        return true;
      case 'claim':
        if (this.state !== 'Ready') return false;
        this.state = 'Committing';
        return true;
      case 'released':
        this.state = 'Abandoned';
        this.unresolved = false;
        this.abandonedBecause = event.why;
        return true;
    }
  }

  private proposed(event: ProposalOutcome): boolean {
    if (event.command !== 'commit') {
      if (event.outcome === 'failed' || event.outcome === 'lifted') this.frozenAt = undefined;
      else this.frozenSince = 'at' in event ? event.at : undefined;
      return true;
    }
    switch (event.outcome) {
      case 'committed':
        this.state = 'Committed';
        this.unresolved = false;
        return true;
      case 'refused':
        if (this.state !== 'Committing') return false;
        this.state = 'Ready';
        this.unresolved = false;
        return true;
      case 'unknown':
        this.unresolved = true;
        return true;
      case 'released':
        return this.apply({ type: 'released', why: event.why });
    }
  }

  private abandon(why: string, answer?: unknown): boolean {
    if (this.state !== 'AwaitingCatchUp' && this.state !== 'Ready') return false;
    this.state = 'Abandoned';
    this.abandonedBecause = why;
    this.endedBy = answer;
    return true;
  }

  /**
   * Takes the registered transfer's cursors: barriers (or, frozen with every final recorded,
   * the finals). A frontier read in the same incarnation is kept; the check is monotonic.
   */
  private follow(intent: TransferIntent): void {
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
    this.settle();
  }

  /**
   * Folds probe readings into the cursors. Monotonic within one replica: a lower or missing
   * reading never lowers a frontier nor un-readies the plan. A reading from another replica
   * storage (the target lost its disk) replaces the frontier, which may then go backwards.
   */
  private fold(readings: readonly (FrontierReading | undefined)[], at: number): void {
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
    this.settle();
  }

  /** AwaitingCatchUp <-> Ready, from the cursors alone. */
  private settle(): void {
    if (this.state === 'Ready' && !this.reached()) this.state = 'AwaitingCatchUp';
    if (this.state === 'AwaitingCatchUp' && this.reached()) this.state = 'Ready';
  }

  private reached(): boolean {
    return this.cursors.every((c) => c.frontier !== undefined && c.frontier >= c.barrier);
  }
}

/**
 * What must hold of one plan after every step (TigerBeetle's `invariants()`), in words:
 * - caught up implies frontier >= barrier: Ready or Committing, every source feed has a reading
 *   of the target at or past what it must apply (the barrier, or the final serial once frozen);
 * - committing implies finals complete: a plan claims only holding a freeze with every final;
 * - a cancel answered 204 is never followed by a commit: the plan stays Abandoned and its commit
 *   is never proposed after it.
 */
export function transferCoreInvariants(core: Pick<TransferCore, 'id' | 'state' | 'cursors' | 'frozen' | 'cancelled' | 'commitAfterCancel'>): string[] {
  const violations: string[] = [];
  if (core.state === 'Ready' || core.state === 'Committing') {
    for (const cursor of core.cursors) {
      if (cursor.frontier === undefined || cursor.frontier < cursor.barrier) {
        violations.push(`transfer ${core.id} is ${core.state} while the target holds ${cursor.origin.member}'s feed through ${cursor.frontier ?? 'nothing read'}, short of ${cursor.barrier}`);
      }
    }
  }
  if (core.state === 'Committing' && !core.frozen) violations.push(`transfer ${core.id} is Committing without a freeze holding every final serial`);
  if (core.cancelled && (core.state !== 'Abandoned' || core.commitAfterCancel)) {
    violations.push(`transfer ${core.id} was cancelled (answered 204), yet it is ${core.state}${core.commitAfterCancel ? ' with its commit proposed after the cancel' : ''}`);
  }
  return violations;
}
