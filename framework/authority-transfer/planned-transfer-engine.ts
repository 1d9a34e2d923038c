import type { AuditRecord, AuditStore } from '../contracts/audit-store.js';
import type { Clock, Timer } from '../contracts/clock.js';
import type { Logger } from '../contracts/logger.js';
import { NotAppendedError } from '../contracts/metadata-consensus.js';
import type { BatonMetrics } from '../http/metrics.js';
import type { AuditProjection, OwnershipConsensus } from './audit-projection.js';
import { awaitCatchUp } from './catch-up.js';
import type { ChangeFeed } from './change-feed.js';
import type { FrontierProbe } from './frontier-probe.js';
import type { CommitPlannedTransferResult } from './ownership.js';
import { PlanRegistry } from './plan-registry.js';
import { DEFAULT_REPROBE_SCHEDULE, type ReprobeSchedule } from './reprobe-schedule.js';
import {
  AuditProjectionError,
  CatchUpTimeoutError,
  CommitRefusedError,
  IdempotencyKeyMismatchError,
  InvalidTransferRequestError,
  MoveRefusedError,
  TransferCancelledError,
  TransferCommittedError,
  TransferCommittingError,
  TransferInProgressError,
  TransferNotFoundError,
  TransferOutcomeUnknownError,
} from './transfer-errors.js';
import { TransferPlan, type PlanState, type TransferRequest } from './transfer-plan.js';

export interface PlannedTransferOptions {
  /** How long a transfer may wait for the target to reach the barrier (seed: about 5 minutes). */
  budgetMs: number;
  /** How long one probe may take before it reads as no frontier (seed: ten seconds). */
  probeTimeoutMs: number;
  schedule: ReprobeSchedule;
  /** How many abandoned authorities a repeated cancel stays idempotent for (seed: 256). */
  abandonedWindow: number;
  /** Backoff of the background resolution of a commit whose outcome is unknown. */
  resolution: { initialDelayMs: number; maxDelayMs: number };
}

export const DEFAULT_PLANNED_TRANSFER_OPTIONS: PlannedTransferOptions = {
  budgetMs: 5 * 60_000,
  probeTimeoutMs: 10_000,
  schedule: DEFAULT_REPROBE_SCHEDULE,
  abandonedWindow: 256,
  resolution: { initialDelayMs: 500, maxDelayMs: 30_000 },
};

export interface PlannedTransferDeps {
  consensus: OwnershipConsensus;
  audit: AuditStore;
  projection: AuditProjection;
  probe: FrontierProbe;
  feed: ChangeFeed;
  clock: Clock;
  log: Logger;
  /** Transfers by outcome and their durations, when the host exposes metrics. */
  metrics?: BatonMetrics;
}

/** What GET /availability/v1/transfers/{authority} shows of a transfer in flight. */
export interface TransferStatus {
  id: string;
  authority: string;
  source: string;
  target: string;
  actor: string;
  reason: string;
  state: PlanState;
  barrier: number;
  frontier: number | null;
  last_reading_age_ms: number | null;
  age_ms: number;
  deadline_in_ms: number;
  outcome_unknown: boolean;
}

/**
 * Planned transfers (seed 003): a catch-up gate, a claim, one consensus commit that seals the
 * audit, and its projection. Each public method answers promptly from the plan; only the run
 * (start) waits on the probe and the consensus, and never while holding the plan.
 */
export class PlannedTransferEngine {
  readonly registry: PlanRegistry;
  private readonly options: PlannedTransferOptions;
  private readonly expiries = new Map<TransferPlan, Timer>();
  /** Plans claimed without a known outcome, each with its next resolution attempt. */
  private readonly resolutions = new Map<TransferPlan, { timer: Timer; attempt: number }>();
  private stopped = false;

  constructor(
    private readonly deps: PlannedTransferDeps,
    options: Partial<PlannedTransferOptions> = {},
  ) {
    this.options = { ...DEFAULT_PLANNED_TRANSFER_OPTIONS, ...options };
    this.registry = new PlanRegistry(this.options.abandonedWindow);
  }

  /**
   * Runs a transfer to its single outcome: the sealed record (committed and stored here), or a
   * typed error. Duplicate requests under the same key share one run and one move.
   */
  async start(request: TransferRequest): Promise<AuditRecord> {
    validate(request);
    const attached = this.attach(request);
    if (attached) return attached;
    const now = this.deps.clock.now();
    // The barrier is this member's own serial: every write it has acknowledged so far. The plan
    // is registered before anything is awaited, so a cancel right after the POST finds it.
    const plan = new TransferPlan(request, this.deps.feed.serial(), now, now + this.options.budgetMs);
    this.registry.register(plan);
    return this.launch(plan, true);
  }

  /**
   * Cancels the authority's transfer. Resolves when it was abandoned (204), including a repeated
   * cancel within the abandoned window; throws TransferCommittedError (409) when the move
   * committed or is committing, TransferNotFoundError (404), or StoreUnavailableError /
   * ReadUnavailableError (503) when the audit cannot be read.
   */
  async cancel(authority: string): Promise<void> {
    const plan = this.registry.get(authority);
    if (plan) {
      if (plan.abandon('cancelled by an administrator')) {
        this.forgetExpiry(plan);
        this.registry.abandon(plan);
        this.deps.log.info({ transfer: plan.id, authority }, 'transfer cancelled');
        return;
      }
      if (plan.state === 'Committing' && !plan.unresolved) throw new TransferCommittingError(authority, plan.id);
      // Claimed and left without a known outcome: only the durable audit knows.
      const sealed = await this.findSealed(plan.id);
      if (sealed) {
        this.registry.resolve(plan);
        throw new TransferCommittedError(authority, sealed.id);
      }
      throw new TransferNotFoundError(authority);
    }
    if (this.registry.abandoned.get(authority) !== undefined) return;
    const committed = await this.latestSealed(authority);
    if (committed) throw new TransferCommittedError(authority, committed.id);
    throw new TransferNotFoundError(authority);
  }

  status(authority: string): TransferStatus | undefined {
    const plan = this.registry.get(authority);
    if (!plan) return undefined;
    const now = this.deps.clock.now();
    const r = plan.request;
    return {
      id: r.id,
      authority: r.authority,
      source: r.source,
      target: r.target,
      actor: r.actor,
      reason: r.reason,
      state: plan.state,
      barrier: plan.barrier,
      frontier: plan.frontier ?? null,
      last_reading_age_ms: plan.lastReadingAt === undefined ? null : now - plan.lastReadingAt,
      age_ms: now - plan.createdAt,
      deadline_in_ms: Math.max(0, plan.deadline - now),
      outcome_unknown: plan.unresolved,
    };
  }

  /** Abandons every plan still waiting (host shutdown); their runs answer 409. */
  stop(): void {
    for (const plan of [...this.registry.all()]) {
      if (plan.abandon('the node is shutting down')) this.registry.abandon(plan);
    }
    for (const timer of this.expiries.values()) timer.cancel();
    this.expiries.clear();
    this.stopped = true;
    for (const { timer } of this.resolutions.values()) timer.cancel();
    this.resolutions.clear();
  }

  /** Plans claimed whose commit outcome is still unknown (being resolved in the background). */
  get unresolvedCount(): number {
    return this.resolutions.size;
  }

  /** Joins the registered plan for this authority, if any: same key shares it, another is refused. */
  private attach(request: TransferRequest): Promise<AuditRecord> | undefined {
    const plan = this.registry.get(request.authority);
    if (!plan) return undefined;
    if (plan.id !== request.id) throw new TransferInProgressError(request.authority, plan.id);
    if (!plan.sameRequest(request)) {
      throw new IdempotencyKeyMismatchError(request.id, `it moves ${describe(plan.request)}`);
    }
    return (plan.run as Promise<AuditRecord> | undefined) ?? this.launch(plan);
  }

  private launch(plan: TransferPlan, fresh = false): Promise<AuditRecord> {
    this.forgetExpiry(plan);
    this.forgetResolution(plan);
    const run = (fresh ? this.admit(plan) : this.drive(plan)).finally(() => {
      if (plan.run === run) plan.run = undefined;
      this.armExpiry(plan);
      this.armResolution(plan);
    });
    plan.run = run;
    run.then(
      () => this.recordOutcome(plan, 'committed'),
      (error) => this.recordOutcome(plan, outcomeOf(error)),
    );
    return run;
  }

  private recordOutcome(plan: TransferPlan, outcome: string): void {
    // An unknown outcome is counted once, when it first happens; its resolution counts again.
    if (outcome === 'outcome_unknown' && plan.countedUnknown) return;
    if (outcome === 'outcome_unknown') plan.countedUnknown = true;
    this.deps.metrics?.recordTransfer(outcome, this.deps.clock.now() - plan.createdAt);
  }

  /**
   * A new plan first learns whether its key already decided a move (a retry after a commit, a
   * lost answer, a failed projection): that decision is the answer. Otherwise the authority must
   * live at the source.
   *
   * Both are read from this member's applied view first, which costs no consensus round: a
   * sealed record there is committed, and a home at the source lets the plan go on, since the
   * commit itself is checked by the state machine (source still home) and deduplicated by its
   * key (a decision this view has not seen yet is replayed, never made twice). Only an answer
   * that would refuse the move (another home, no home) is confirmed by a linearizable read, so
   * a lagging view never refuses what the cluster would allow.
   */
  private async admit(plan: TransferPlan): Promise<AuditRecord> {
    const request = plan.request;
    let sealed: AuditRecord | undefined;
    let home: { home: string; epoch: number } | undefined;
    try {
      let { state } = this.deps.consensus.view();
      if (state.authorities[request.authority]?.home !== request.source && !state.pending[request.id]) {
        ({ state } = await this.deps.consensus.read());
      }
      sealed = state.pending[request.id]?.record ?? (await this.deps.audit.byId(request.id));
      home = state.authorities[request.authority];
    } catch (error) {
      if (plan.abandon('the metadata store could not be read')) this.registry.resolve(plan);
      throw error;
    }
    if (plan.isAbandoned()) throw new TransferCancelledError(plan.id, plan.authority);
    if (sealed) {
      if (plan.abandon('the key already decided a move')) this.registry.resolve(plan);
      assertSameTransfer(request, sealed);
      return this.projectForAnswer(sealed);
    }
    if (!home || home.home !== request.source) {
      if (plan.abandon('the source is not the home')) this.registry.resolve(plan);
      throw home
        ? new MoveRefusedError(request.authority, 'source_not_home', `its home is ${home.home} (epoch ${home.epoch}), not ${request.source}`)
        : new MoveRefusedError(request.authority, 'unknown_authority', `${request.authority} has no home yet; establish it with a transfer_authority command`);
    }
    return this.drive(plan);
  }

  private async drive(plan: TransferPlan): Promise<AuditRecord> {
    if (plan.state === 'AwaitingCatchUp') {
      const outcome = await awaitCatchUp(plan, {
        clock: this.deps.clock,
        probe: this.deps.probe,
        origin: this.deps.feed.origin(),
        probeTimeoutMs: this.options.probeTimeoutMs,
        schedule: this.options.schedule,
      });
      if (outcome === 'timed_out' && plan.abandon('catch-up budget exhausted')) {
        this.registry.abandon(plan);
        this.deps.log.info({ transfer: plan.id, barrier: plan.barrier, frontier: plan.frontier }, 'transfer timed out');
        throw new CatchUpTimeoutError(plan.id, plan.authority, plan.barrier, plan.frontier, this.options.budgetMs);
      }
    }
    if (plan.state === 'Committing') return this.commit(plan);
    // The claim: the only step taken under the plan lock, a synchronous check-and-set.
    if (!plan.claim()) throw new TransferCancelledError(plan.id, plan.authority);
    return this.commit(plan);
  }

  private async commit(plan: TransferPlan): Promise<AuditRecord> {
    let result: CommitPlannedTransferResult;
    try {
      const receipt = await this.deps.consensus.propose(plan.command(), { idempotencyKey: plan.id });
      result = receipt.result as CommitPlannedTransferResult;
    } catch (error) {
      if (error instanceof NotAppendedError) {
        if (error.reason === 'key_reused') {
          // The key already decided a transfer (a retry through another member, with its own
          // barrier): that decision is the answer if it is this move.
          const sealed = await this.findSealed(plan.id).catch(() => undefined);
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
      const sealed = await this.findSealed(plan.id).catch(() => undefined);
      if (sealed && plan.sameRequest({ ...sealed })) return this.settle(plan, sealed);
      this.registry.resolve(plan);
      throw new MoveRefusedError(plan.authority, result.reason, `the ownership state refused the move (${result.reason}, home ${result.home ?? 'none'})`);
    }
    return this.settle(plan, result.record);
  }

  private settle(plan: TransferPlan, record: AuditRecord): Promise<AuditRecord> {
    plan.markCommitted();
    this.registry.resolve(plan);
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

  /** The sealed record of transfer `id`: pending in consensus (linearizable read) or stored. */
  private async findSealed(id: string): Promise<AuditRecord | undefined> {
    const { state } = await this.deps.consensus.read();
    return state.pending[id]?.record ?? (await this.deps.audit.byId(id));
  }

  private async latestSealed(authority: string): Promise<AuditRecord | undefined> {
    const { state } = await this.deps.consensus.read();
    let latest: AuditRecord | undefined;
    for (const { record } of Object.values(state.pending)) {
      if (record.authority === authority && (!latest || record.commit_index > latest.commit_index)) latest = record;
    }
    return latest ?? (await this.deps.audit.latest(authority));
  }

  /**
   * A plan left Ready after a refusal has no run: it stays cancellable and resumable under its
   * key until its deadline, then it is abandoned so it cannot block the authority forever.
   */
  private armExpiry(plan: TransferPlan): void {
    if (plan.run || (plan.state !== 'Ready' && plan.state !== 'AwaitingCatchUp')) return;
    if (this.registry.get(plan.authority) !== plan) return;
    const delay = Math.max(0, plan.deadline - this.deps.clock.now());
    this.expiries.set(
      plan,
      this.deps.clock.setTimer(delay, () => {
        this.expiries.delete(plan);
        if (!plan.run && plan.abandon('budget exhausted while Ready')) this.registry.abandon(plan);
      }),
    );
  }

  /**
   * A claimed plan left without a known outcome blocks its authority until it is resolved. The
   * resolution is what a retry under the same key does: propose the same command under the same
   * idempotency key again. If an earlier attempt committed, consensus replays that decision (or
   * the audit holds it); if none did, this one commits the move the operator ordered and could
   * no longer cancel. Either way the key reaches its one outcome, and a delayed earlier attempt
   * landing later is deduplicated into it. Attempts back off up to `resolution.maxDelayMs`.
   */
  private armResolution(plan: TransferPlan): void {
    if (this.stopped || plan.run || plan.state !== 'Committing' || !plan.unresolved) return;
    if (this.registry.get(plan.authority) !== plan || this.resolutions.has(plan)) return;
    const attempt = (plan.resolutionAttempts = (plan.resolutionAttempts ?? 0) + 1);
    const { initialDelayMs, maxDelayMs } = this.options.resolution;
    const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt - 1, 20));
    const timer = this.deps.clock.setTimer(delay, () => {
      this.resolutions.delete(plan);
      if (plan.run || plan.state !== 'Committing' || this.registry.get(plan.authority) !== plan) return;
      this.deps.log.info({ transfer: plan.id, attempt }, 'resolving a transfer whose commit outcome is unknown');
      this.launch(plan).catch(() => undefined);
    });
    this.resolutions.set(plan, { timer, attempt });
  }

  private forgetResolution(plan: TransferPlan): void {
    this.resolutions.get(plan)?.timer.cancel();
    this.resolutions.delete(plan);
  }

  private forgetExpiry(plan: TransferPlan): void {
    this.expiries.get(plan)?.cancel();
    this.expiries.delete(plan);
  }
}

function validate(request: TransferRequest): void {
  for (const field of ['id', 'authority', 'source', 'target', 'actor'] as const) {
    if (typeof request[field] !== 'string' || request[field].length === 0) {
      throw new InvalidTransferRequestError(`${field} must be a non-empty string`);
    }
  }
  if (typeof request.reason !== 'string') throw new InvalidTransferRequestError('reason must be a string');
  if (request.source === request.target) {
    throw new InvalidTransferRequestError(`source and target are both ${request.source}: a transfer moves between two datacenters`);
  }
}

function assertSameTransfer(request: TransferRequest, sealed: AuditRecord): void {
  const same =
    sealed.authority === request.authority &&
    sealed.source === request.source &&
    sealed.target === request.target &&
    sealed.reason === request.reason;
  if (!same) throw new IdempotencyKeyMismatchError(request.id, `it committed ${describe(sealed)}`);
}

function describe(r: { authority: string; source: string; target: string; reason: string }): string {
  return `${r.authority} from ${r.source} to ${r.target} (reason ${JSON.stringify(r.reason)})`;
}

/** The metrics label of a run that ended in `error`. */
function outcomeOf(error: unknown): string {
  if (error instanceof TransferCancelledError) return 'cancelled';
  if (error instanceof CatchUpTimeoutError) return 'timed_out';
  if (error instanceof TransferOutcomeUnknownError) return 'outcome_unknown';
  if (error instanceof MoveRefusedError || error instanceof CommitRefusedError || error instanceof IdempotencyKeyMismatchError) return 'refused';
  if (error instanceof AuditProjectionError) return 'committed_unprojected';
  return 'failed';
}
