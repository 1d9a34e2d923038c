import type { AuditRecord } from '@baton/contracts';
import { waitForIntent } from './intent-wait.js';
import type { OwnershipCommand, OwnershipResult, TransferIntent } from './ownership.js';
import { BackgroundReleases } from './background-releases.js';
import { PlanRegistry } from './plan-registry.js';
import { releasedAnswer, releasedBecause } from './plan-waits.js';
import { SealedRecords } from './sealed-records.js';
import { OwnFeedPosition, type SourcePositions } from './source-positions.js';
import { ClockSkewError, IdempotencyKeyMismatchError, OwnershipUnavailableError, TransferCancelledError, TransferInProgressError, TransferReleasedError } from './transfer-errors.js';
import { TransferPlan, type TransferRequest } from './transfer-plan.js';
import { DEFAULT_PLANNED_TRANSFER_OPTIONS, type PlannedTransferDeps, type PlannedTransferOptions } from './planned-transfer-options.js';
import { abandonedMove, authorityOf, describeMove, outcomeOf, sameMove, validateSchedule, validateTransferRequest } from './transfer-requests.js';
import { abandonedKey } from './ownership-index.js';
import { TransferCancels } from './transfer-cancels.js';
import { TransferRegistration } from './transfer-registration.js';
import { TransferRun } from './transfer-run.js';
import { transferStatus, type TransferStatus } from './transfer-status.js';
import { UndrivenTransfers } from './undriven-transfers.js';
import { answerAtRegistration, scheduledDeadline } from './scheduled-start.js';

export { DEFAULT_PLANNED_TRANSFER_OPTIONS, type PlannedTransferDeps, type PlannedTransferOptions } from './planned-transfer-options.js';
export type { TransferStatus } from './transfer-status.js';

/**
 * Planned transfers (seed 003): the thin driver that holds this member's plans (one pure
 * TransferCore each, see transfer-core.ts), performs their effects and feeds the results back.
 * It is the local driver of a transfer registered in the replicated ownership state. A run registers the transfer (one per authority cluster-wide, barrier taken
 * from the source members' acknowledged writes), waits for the target to reach the barrier,
 * freezes the authority at the source, waits for the source members' final serials and for the
 * target to reach them, claims, and commits once. Each public method answers promptly from the
 * plan; only the run (start) waits on probes and the consensus, and never while holding the plan.
 */
export class TransferDriver {
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
  private readonly run: TransferRun;
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
    this.run = new TransferRun({ deps, options: this.options, registry: this.registry, releases: this.releases, sealed: this.sealed });
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
    const plan = new TransferPlan(request, now, scheduledDeadline(request, now, this.options.budgetMs), { freezeBudgetMs: this.options.freezeBudgetMs, violations: this.registry.violations });
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
    const run = (fresh ? this.admit(plan) : this.run.drive(plan)).catch((error: unknown) => {
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
    if (admitted.kind === 'sealed') return this.run.projectForAnswer(admitted.record);
    if (admitted.kind === 'follow') return this.follow(plan, admitted.intent);
    return this.run.drive(plan);
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
    if (sealed) return this.run.projectForAnswer(sealed);
    // Still registered past its deadline and grace (its driver and the others out of reach), or
    // released because it expired or timed out: this request timed out, as the driver's would.
    const registered = this.deps.consensus.view().state.transfers.get(plan.authority)?.id === plan.id;
    throw releasedAnswer(plan, registered ? 'expired' : releasedBecause(this.deps.consensus.view().state, this.registry, plan.id), this.options.budgetMs);
  }

  private endFollower(plan: TransferPlan): void {
    plan.abandon('followed to its end');
    this.registry.resolve(plan);
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
    const answer = releasedAnswer(plan, command.why, this.options.budgetMs, plan.barrier);
    return answer instanceof TransferCancelledError ? undefined : answer;
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
