import { type AuditRecord, NotAppendedError } from '@baton/contracts';
import { awaitCatchUp } from './catch-up.js';
import { waitForIntent } from './intent-wait.js';
import type {
  CommitPlannedTransferResult,
  OwnershipCommand,
  OwnershipResult,
  TransferIntent,
  TransferLifecycleResult,
} from './ownership.js';
import { finalsComplete } from './ownership.js';
import { BackgroundReleases } from './background-releases.js';
import { PlanRegistry } from './plan-registry.js';
import { endedAnswer, untilPlanApplied } from './plan-waits.js';
import { SealedRecords } from './sealed-records.js';
import { OwnFeedPosition, type SourcePositions } from './source-positions.js';
import {
  AuditProjectionError,
  CatchUpTimeoutError,
  ClockSkewError,
  CommitRefusedError,
  IdempotencyKeyMismatchError,
  MoveRefusedError,
  OwnershipUnavailableError,
  TransferCancelledError,
  TransferInProgressError,
  TransferOutcomeUnknownError,
  TransferReleasedError,
} from './transfer-errors.js';
import { TransferPlan, type TransferRequest } from './transfer-plan.js';
import { DEFAULT_PLANNED_TRANSFER_OPTIONS, type PlannedTransferDeps, type PlannedTransferOptions } from './planned-transfer-options.js';
import { abandonedMove, authorityOf, describeMove, outcomeOf, sameMove, validateSchedule, validateTransferRequest } from './transfer-requests.js';
import { abandonedKey } from './ownership-index.js';
import { TransferCancels } from './transfer-cancels.js';
import { TransferRegistration } from './transfer-registration.js';
import { transferStatus, type TransferStatus } from './transfer-status.js';
import { UndrivenTransfers } from './undriven-transfers.js';
import { answerAtRegistration, scheduledDeadline, untilScheduledStart } from './scheduled-start.js';

export { DEFAULT_PLANNED_TRANSFER_OPTIONS, type PlannedTransferDeps, type PlannedTransferOptions } from './planned-transfer-options.js';
export type { TransferStatus } from './transfer-status.js';

/**
 * Planned transfers (seed 003): the local driver of a transfer registered in the replicated
 * ownership state. A run registers the transfer (one per authority cluster-wide, barrier taken
 * from the source members' acknowledged writes), waits for the target to reach the barrier,
 * freezes the authority at the source, waits for the source members' final serials and for the
 * target to reach them, claims, and commits once. Each public method answers promptly from the
 * plan; only the run (start) waits on probes and the consensus, and never while holding the plan.
 */
export class PlannedTransferEngine {
  readonly registry: PlanRegistry;
  private readonly options: PlannedTransferOptions;
  private readonly sources: SourcePositions;
  /** Releases and thaws this member proposed and has not seen applied, by authority. */
  private readonly releases: BackgroundReleases;
  /** Plans resting without a run, plans left without outcome, registrations nobody drives. */
  private readonly undriven: UndrivenTransfers;
  private readonly sealed: SealedRecords;
  private readonly cancels: TransferCancels;
  private readonly registration: TransferRegistration;
  private readonly unsubscribe: (() => void)[] = [];
  private stopped = false;

  constructor(
    private readonly deps: PlannedTransferDeps,
    options: Partial<PlannedTransferOptions> = {},
  ) {
    this.options = { ...DEFAULT_PLANNED_TRANSFER_OPTIONS, ...options };
    this.registry = new PlanRegistry(this.options.abandonedWindow);
    this.sources = deps.sources ?? new OwnFeedPosition(deps.feed);
    const { consensus, clock, log } = deps;
    const self = () => this.self;
    this.releases = new BackgroundReleases({ consensus, clock, log, self, stopped: () => this.stopped });
    this.undriven = new UndrivenTransfers({ consensus, clock, log, self, options: this.options, registry: this.registry, releases: this.releases, launch: (plan) => this.launch(plan) });
    this.sealed = new SealedRecords(deps);
    this.registration = new TransferRegistration({ consensus, audit: deps.audit, clock, log, self, options: this.options, registry: this.registry, releases: this.releases, sources: this.sources });
    this.cancels = new TransferCancels({ consensus, log, self, registry: this.registry, releases: this.releases, undriven: this.undriven, sealed: this.sealed });
    this.unsubscribe.push(deps.consensus.watch((view, entry) => this.onApplied(view.state.transfers.get(authorityOf(entry.command) ?? ''), entry)));
    this.undriven.start();
  }

  get self(): string {
    return this.deps.consensus.leadership().self;
  }

  /**
   * Runs a transfer to its single outcome: the sealed record (committed and stored here), or a
   * typed error. Duplicate requests under the same key share one run and one move.
   */
  async start(request: TransferRequest): Promise<AuditRecord> {
    validateTransferRequest(request);
    const attached = this.attach(request);
    if (attached) return attached;
    // A key called off may be reissued for the same move, not for another one. The replicated
    // state decides it for every registered key (and refuses the registration too); this
    // member's window also knows keys it called off before their registration applied.
    const replicated = abandonedKey(this.deps.consensus.view().state, request.id);
    const local = this.registry.abandoned.lookup(request.id);
    const abandoned = replicated ?? (local?.request && { authority: local.authority, ...local.request, why: local.why });
    if (abandoned && !sameMove(request, abandoned)) throw new IdempotencyKeyMismatchError(request.id, abandonedMove(abandoned));
    const skewed = this.deps.clocks?.exceeded();
    if (skewed) throw new ClockSkewError(request.id, skewed.peer, skewed.offsetMs, skewed.boundMs, 'before registering');
    const now = this.deps.clock.now();
    validateSchedule(request, now);
    // The plan is registered here before anything is awaited, so a cancel right after the POST
    // finds it; the replicated registration follows in the run.
    const plan = new TransferPlan(request, now, scheduledDeadline(request, now, this.options.budgetMs));
    this.registry.register(plan);
    return this.launch(plan, true);
  }

  /**
   * What POST /transfers answers: a transfer whose `notBefore` is ahead is scheduled (answered
   * once registered, with its status: 202), any other runs to its record (200).
   */
  async startOrSchedule(request: TransferRequest): Promise<{ status: TransferStatus } | { record: AuditRecord }> {
    if (request.notBefore !== undefined && request.notBefore > this.deps.clock.now()) return this.schedule(request);
    return { record: await this.start(request) };
  }

  /** A scheduled transfer (`notBefore` ahead): its run starts as `start` does; answered at its registration (scheduled-start.ts). */
  schedule(request: TransferRequest): Promise<{ status: TransferStatus } | { record: AuditRecord }> {
    const run = this.start(request);
    return answerAtRegistration(run, this.registry.get(request.authority), request, () => this.status(request.authority));
  }

  /**
   * Cancels the authority's transfer: resolves for 204, throws for 409, 404 or 503 (see
   * TransferCancels.cancel).
   */
  cancel(authority: string): Promise<void> {
    return this.cancels.cancel(authority);
  }

  status(authority: string): TransferStatus | undefined {
    const plan = this.registry.get(authority);
    const intent = this.deps.consensus.view().state.transfers.get(authority);
    return transferStatus(plan && !plan.follower ? plan : undefined, intent, { now: this.deps.clock.now(), self: this.self, budgetMs: this.options.budgetMs });
  }

  /** Abandons every plan still waiting (host shutdown); their runs answer 409. */
  stop(): void {
    for (const plan of [...this.registry.all()]) {
      if (plan.abandon('the node is shutting down')) this.registry.abandon(plan);
    }
    this.stopped = true;
    this.undriven.stop();
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /** Plans claimed whose commit outcome is still unknown (being resolved in the background). */
  get unresolvedCount(): number {
    return this.undriven.unresolvedCount;
  }

  /** Joins the plan for this authority, if any: same key shares it, another is refused. */
  private attach(request: TransferRequest): Promise<AuditRecord> | undefined {
    const plan = this.registry.get(request.authority);
    if (!plan) return undefined;
    if (plan.id !== request.id) throw new TransferInProgressError(request.authority, plan.id);
    if (!plan.sameRequest(request)) {
      throw new IdempotencyKeyMismatchError(request.id, `it moves ${describeMove(plan.request)}`);
    }
    return (plan.run as Promise<AuditRecord> | undefined) ?? this.launch(plan);
  }

  private launch(plan: TransferPlan, fresh = false): Promise<AuditRecord> {
    this.undriven.forgetExpiry(plan);
    this.undriven.forgetResolution(plan);
    const run = (fresh ? this.admit(plan) : this.drive(plan)).catch((error: unknown) => {
      // Cut short by this member's shutdown, not cancelled: its registration stays replicated.
      if (this.stopped && error instanceof TransferCancelledError) {
        throw new OwnershipUnavailableError(`member ${this.self} is shutting down; transfer ${plan.id} stays registered: retry with Idempotency-Key ${plan.id} once it is back (it resumes there), or cancel it`);
      }
      throw error;
    }).finally(() => {
      if (plan.run === run) plan.run = undefined;
      this.undriven.armExpiry(plan);
      this.undriven.armResolution(plan);
    });
    plan.run = run;
    run.then(
      () => this.recordOutcome(plan, 'committed'),
      (error) => {
        const outcome = outcomeOf(error);
        // A run that answers "cancelled" says why in the log: an operator's cancel, or the
        // replicated registration gone (released elsewhere, expired, a failover).
        if (outcome === 'cancelled') this.deps.log.info({ transfer: plan.id, authority: plan.authority, why: plan.abandonedBecause ?? (error as Error).message }, 'transfer run ended: cancelled');
        this.recordOutcome(plan, outcome);
      },
    );
    return run;
  }

  private recordOutcome(plan: TransferPlan, outcome: string): void {
    // An unknown outcome is counted once, when it first happens; its resolution counts again.
    if (outcome === 'outcome_unknown' && plan.countedUnknown) return;
    if (outcome === 'outcome_unknown') plan.countedUnknown = true;
    const { authority, source, target } = plan.request;
    this.deps.metrics?.recordTransfer(outcome, this.deps.clock.now() - plan.createdAt, { name: authority, source, target });
  }

  /**
   * A new plan is admitted (TransferRegistration): its key's decision answers it, another
   * member's run of the key is followed, or this member registered it and drives it.
   */
  private async admit(plan: TransferPlan): Promise<AuditRecord> {
    const admitted = await this.registration.admit(plan);
    if (admitted.kind === 'sealed') return this.projectForAnswer(admitted.record);
    if (admitted.kind === 'follow') return this.follow(plan, admitted.intent);
    return this.drive(plan);
  }

  /**
   * The key is registered and driven by another member: this request waits for its outcome in
   * the replicated state (the record once committed, a 409 once released) and never drives it,
   * so no two members ever drive one transfer.
   */
  private async follow(plan: TransferPlan, intent: TransferIntent): Promise<AuditRecord> {
    plan.markFollowing();
    const until = Math.max(plan.deadline, intent.deadline + this.options.expiryGraceMs);
    await waitForIntent(this.deps.consensus, this.deps.clock, plan.authority, (i) => i?.id !== plan.id, { until, signal: plan.signal });
    this.endFollower(plan);
    const sealed = await this.sealed.find(plan.id);
    if (sealed) return this.projectForAnswer(sealed);
    // Still registered past its deadline and grace (its driver and the others out of reach), or
    // released because it expired or timed out: this request timed out, as the driver's would.
    const registered = this.deps.consensus.view().state.transfers.get(plan.authority)?.id === plan.id;
    throw this.answerFor(plan, registered ? 'expired' : this.releasedBecause(plan.id));
  }

  private endFollower(plan: TransferPlan): void {
    plan.abandon('followed to its end');
    this.registry.resolve(plan);
  }

  private async drive(plan: TransferPlan): Promise<AuditRecord> {
    await this.untilStart(plan);
    for (;;) {
      if (plan.state === 'Committing') return this.commit(plan);
      if (plan.needsReading()) {
        const until = plan.frozen ? Math.min(plan.deadline, (plan.frozenSince ?? 0) + this.options.freezeBudgetMs) : plan.deadline;
        const outcome = await awaitCatchUp(plan, {
          clock: this.deps.clock,
          probe: this.deps.probe,
          probeTimeoutMs: this.options.probeTimeoutMs,
          schedule: plan.frozen ? this.options.freezeSchedule : this.options.schedule,
          waitMs: this.options.frontierWaitMs,
          until,
        });
        if (outcome === 'abandoned') throw endedAnswer(plan);
        if (outcome === 'timed_out') {
          if (this.deps.clock.now() < plan.deadline && plan.frozen) {
            // The freeze held too long: writes resume, the target catches up on the finals unfrozen.
            this.deps.log.info({ transfer: plan.id, barrier: plan.barrier, frontier: plan.frontier }, 'freeze budget spent; lifting the freeze');
            await this.thaw(plan);
            continue;
          }
          if (plan.abandon('catch-up budget exhausted')) {
            this.registry.abandon(plan);
            this.releases.release(plan, 'timed_out');
            this.deps.log.info({ transfer: plan.id, barrier: plan.barrier, frontier: plan.frontier }, 'transfer timed out');
            throw new CatchUpTimeoutError(plan.id, plan.authority, plan.barrier, plan.frontier, this.options.budgetMs);
          }
        }
        continue;
      }
      if (plan.isAbandoned()) throw endedAnswer(plan);
      if (!plan.frozen) {
        await this.freeze(plan);
        continue;
      }
      // The claim: the only step taken under the plan lock, a synchronous check-and-set.
      if (!plan.claim()) throw endedAnswer(plan);
      return this.commit(plan);
    }
  }

  /** A scheduled transfer waits for its start, then has the clocks checked again: they were when it registered, maybe days ago. */
  private async untilStart(plan: TransferPlan): Promise<void> {
    const waited = await untilScheduledStart(plan, this.deps.clock, this.deps.log);
    const skewed = waited ? this.deps.clocks?.exceeded() : undefined;
    if (skewed && plan.abandon(`a peer clock is past the skew bound at its start (${skewed.peer})`)) {
      this.registry.abandon(plan);
      this.releases.release(plan, 'abandoned');
      throw new ClockSkewError(plan.id, skewed.peer, skewed.offsetMs, skewed.boundMs, 'at its start');
    }
  }

  /**
   * The target reached the barrier: freeze the authority at the source and wait until every
   * source member recorded its final serial; the plan then catches the target up on those.
   */
  private async freeze(plan: TransferPlan): Promise<void> {
    const intent = this.deps.consensus.view().state.transfers.get(plan.authority);
    if (!(intent?.id === plan.id && intent.frozen)) {
      const { result: frozen, index } = await this.proposeForPlan(plan, { type: 'freeze_transfer', id: plan.id, authority: plan.authority, thawBy: this.deps.clock.now() + this.options.freezeBudgetMs });
      if (!frozen.ok) return this.lost(plan, frozen.reason);
      plan.frozenSince = this.deps.clock.now();
      // The freeze holds writes: waiting for this member to apply it is bounded like the freeze.
      const applied = await untilPlanApplied(this.deps, plan, index, Math.min(plan.deadline, plan.frozenSince + this.options.freezeBudgetMs));
      if (applied === 'timed_out') {
        this.deps.log.info({ transfer: plan.id }, 'this member did not apply its freeze within the freeze budget; lifting it');
        return this.thaw(plan);
      }
    } else {
      plan.frozenSince = this.deps.clock.now();
    }
    const outcome = await waitForIntent(
      this.deps.consensus,
      this.deps.clock,
      plan.authority,
      (i) => i?.id !== plan.id || !i.frozen || finalsComplete(i),
      { until: Math.min(plan.deadline, plan.frozenSince + this.options.freezeBudgetMs), signal: plan.signal },
    );
    if (outcome === 'aborted' || plan.isAbandoned()) throw endedAnswer(plan);
    const now = this.deps.consensus.view().state.transfers.get(plan.authority);
    if (now?.id !== plan.id) return this.lost(plan, 'not_registered');
    if (outcome === 'timed_out' || !now.frozen) {
      // A source member did not answer in time (or the freeze was lifted): writes resume.
      if (now.frozen) await this.thaw(plan);
      if (this.deps.clock.now() >= plan.deadline && plan.abandon('catch-up budget exhausted')) {
        this.registry.abandon(plan);
        this.releases.release(plan, 'timed_out');
        throw new CatchUpTimeoutError(plan.id, plan.authority, plan.barrier, plan.frontier, this.options.budgetMs);
      }
      plan.follow(this.deps.consensus.view().state.transfers.get(plan.authority) ?? now);
      return;
    }
    plan.follow(now);
  }

  private async thaw(plan: TransferPlan): Promise<void> {
    const { result: thawed } = await this.proposeForPlan(plan, { type: 'thaw_transfer', id: plan.id, authority: plan.authority });
    if (!thawed.ok && thawed.reason === 'not_registered') return this.lost(plan, 'not_registered');
    plan.frozenSince = undefined;
    if (thawed.ok) plan.follow(thawed.intent);
  }

  /** The registration is gone (cancelled at another member, expired, a failover): the run ends with 409. */
  private lost(plan: TransferPlan, reason: string): never {
    if (plan.abandon(`the registration is gone (${reason})`)) this.registry.abandon(plan);
    throw endedAnswer(plan);
  }

  /**
   * A freeze or thaw of the plan's transfer. When consensus cannot take it, or its outcome is
   * unknown, the run answers 503 ownership_unavailable at once (never "may have committed": the
   * plan proposed no commit) and the plan stays unclaimed (cancellable, resumable under its key);
   * a freeze that may have applied regardless is lifted behind it (see sweep). The plan keeps the state its readings
   * gave it: a thaw refused while the target is short of the final serials leaves it
   * AwaitingCatchUp, so the resumed run probes before it freezes the writes again.
   */
  private async proposeForPlan(plan: TransferPlan, command: OwnershipCommand): Promise<{ result: TransferLifecycleResult; index: number }> {
    if (plan.isAbandoned()) throw endedAnswer(plan);
    try {
      const receipt = await this.deps.consensus.propose(command);
      return { result: receipt.result as TransferLifecycleResult, index: receipt.position.index };
    } catch (error) {
      if (plan.isAbandoned()) throw endedAnswer(plan);
      plan.frozenAt = undefined;
      const step = command.type === 'freeze_transfer' ? 'freeze' : 'thaw';
      if (error instanceof NotAppendedError) {
        throw new OwnershipUnavailableError(`transfer ${plan.id} could not ${step} its source (${error.reason}); it is not claimed: retry with Idempotency-Key ${plan.id} or cancel it`);
      }
      // Only the freeze or thaw is in doubt, never the move: an unclaimed plan has proposed no
      // commit. A freeze that did apply is lifted behind this answer (see sweep).
      throw new OwnershipUnavailableError(`transfer ${plan.id} did not commit: whether its ${step} applied is not known (${(error as Error).message}), and a freeze no run holds is lifted; it is not claimed: retry with Idempotency-Key ${plan.id} or cancel it`, { cause: error });
    }
  }

  private async commit(plan: TransferPlan): Promise<AuditRecord> {
    let result: CommitPlannedTransferResult;
    try {
      // The driver's clock dates the record; it is no part of the fingerprint, so a retry still replays.
      const at = Math.max(0, Math.floor(this.deps.clock.now()));
      const receipt = await this.deps.consensus.propose({ ...plan.command(), observed: { at } }, { idempotencyKey: plan.id });
      result = receipt.result as CommitPlannedTransferResult;
    } catch (error) {
      if (error instanceof NotAppendedError) {
        if (error.reason === 'key_reused') {
          // The key already decided a transfer (a retry through another member, with its own
          // barrier): that decision is the answer if it is this move.
          const sealed = await this.sealed.find(plan.id).catch(() => undefined);
          if (sealed && plan.sameRequest({ ...sealed })) return this.settle(plan, sealed);
        }
        if (plan.unresolved && error.reason !== 'key_reused') {
          // This attempt did not append, but an earlier one may have and may still commit:
          // the plan stays claimed, and the outcome stays unknown.
          throw new TransferOutcomeUnknownError(plan.id, error);
        }
        plan.release();
        throw new CommitRefusedError(plan.id, error.reason, error);
      }
      plan.unresolved = true;
      this.deps.log.warn({ transfer: plan.id, err: (error as Error).message }, 'transfer outcome unknown; resolving it in the background');
      throw new TransferOutcomeUnknownError(plan.id, error);
    }
    if (!result.ok) {
      // The key may have decided this very move already (an earlier attempt, or a retry admitted
      // on a view that had not seen it) and left the idempotency window since: the durable audit
      // then knows the move, and this refusal is that move seen from after.
      const sealed = await this.sealed.find(plan.id).catch(() => undefined);
      if (sealed && plan.sameRequest({ ...sealed })) return this.settle(plan, sealed);
      if (result.reason === 'not_frozen') {
        // The freeze was lifted under the claim (by another member, past its thaw time): the
        // commit did not apply, nothing moved; freeze again.
        plan.release();
        plan.follow(this.deps.consensus.view().state.transfers.get(plan.authority)!);
        return this.drive(plan);
      }
      if (result.reason === 'not_registered') {
        // Released before the commit applied: by a cancel (at any member), past its deadline, or
        // by a failover. The abandoned window follows the log and says which; "cancelled" only
        // for a cancel, never for what merely took the registration away.
        const why = this.releasedBecause(plan.id);
        plan.abandonClaimed('released in the replicated state');
        this.registry.abandon(plan);
        throw this.answerFor(plan, why ?? 'the registration was gone when the commit applied', plan.barrier);
      }
      this.registry.resolve(plan);
      throw new MoveRefusedError(plan.authority, result.reason, `the ownership state refused the move (${result.reason}, home ${result.home ?? 'none'})`);
    }
    return this.settle(plan, result.record);
  }

  private settle(plan: TransferPlan, record: AuditRecord): Promise<AuditRecord> {
    plan.markCommitted();
    this.registry.resolve(plan);
    this.registry.abandoned.forget(plan.authority);
    this.deps.log.info({ transfer: record.id, authority: record.authority, epoch: record.epoch }, 'transfer committed');
    return this.projectForAnswer(record);
  }

  private async projectForAnswer(record: AuditRecord): Promise<AuditRecord> {
    try {
      await this.deps.projection.project(record);
    } catch (error) {
      throw new AuditProjectionError(record.id, error);
    }
    return record;
  }

  /**
   * Told of every applied command that names an authority (a look-up, no scan): a plan whose
   * registration left the replicated state without its own commit (cancelled at another member,
   * released by a failover or by expiry) is abandoned, so its run answers 409 at once.
   */
  private onApplied(intent: TransferIntent | undefined, entry: { command: OwnershipCommand; result: OwnershipResult; position: { index: number } }): void {
    const { command } = entry;
    const authority = authorityOf(command);
    if (authority === undefined) return;
    this.noteMove(authority, entry);
    const plan = this.registry.get(authority);
    if (!plan || !plan.registered || plan.follower || intent?.id === plan.id) return;
    const what = command.type === 'release_transfer' ? `release_transfer (${command.why})` : command.type;
    if (plan.abandon(`its registration was released in the replicated state (${what} at index ${entry.position.index} left ${intent ? `transfer ${intent.id}` : 'no transfer'} registered)`, this.releaseAnswer(plan, command))) {
      this.undriven.forgetExpiry(plan);
      this.registry.abandon(plan);
    }
  }

  /**
   * What a run answers once its registration left the replicated state without its commit: a
   * release behind a cancel is "cancelled" (undefined here); past its deadline (expired or timed
   * out, say a retry that joined a registration an earlier run held) it is a timeout, 504; any
   * other end (a failover moved the authority, a release after an unknown outcome) says what
   * ended it. Never "cancelled" when no operator cancelled.
   */
  private releaseAnswer(plan: TransferPlan, command: OwnershipCommand): Error | undefined {
    if (command.type !== 'release_transfer') return new TransferReleasedError(plan.id, plan.authority, `${command.type} ended its registration`);
    const answer = this.answerFor(plan, command.why, plan.barrier);
    return answer instanceof TransferCancelledError ? undefined : answer;
  }

  /** Why the key's registration was released, as the replicated state (or this member, for one never registered) knows it. */
  private releasedBecause(id: string): string | undefined {
    return abandonedKey(this.deps.consensus.view().state, id)?.why ?? this.registry.abandoned.lookup(id)?.why;
  }

  /** The answer for a transfer whose registration was released for `why` (undefined: not known). */
  private answerFor(plan: TransferPlan, why: string | undefined, barrier?: number): Error {
    if (why === 'cancelled') return new TransferCancelledError(plan.id, plan.authority);
    if (why === 'expired' || why === 'timed_out') return new CatchUpTimeoutError(plan.id, plan.authority, barrier, barrier === undefined ? undefined : plan.frontier, this.options.budgetMs);
    return new TransferReleasedError(plan.id, plan.authority, why ? `released: ${why}` : 'ended on its driver');
  }

  /**
   * A move of the authority committed (planned or raw): this member's window forgets its
   * abandoned transfer, as the replicated state supersedes it, so a repeated cancel answers 409
   * naming the move rather than 204. What was released the replicated state remembers itself.
   */
  private noteMove(authority: string, entry: { command: OwnershipCommand; result: OwnershipResult; position: { index: number } }): void {
    const { command, result } = entry;
    const planned = command.type === 'commit_planned_transfer' && result.ok && 'record' in result && result.record.commit_index === entry.position.index;
    if (planned || (command.type === 'transfer_authority' && result.ok)) this.registry.abandoned.forget(authority);
  }

}
