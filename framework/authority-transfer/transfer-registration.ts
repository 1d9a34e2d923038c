import { pendingPlanned, plannedOnly } from './planned-record.js';
import { type AuditRecord, type AuditStore, type Clock, type Logger, NotAppendedError } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import type { BackgroundReleases } from './background-releases.js';
import type { RegisterTransferResult, TransferIntent } from './ownership.js';
import type { PlanRegistry } from './plan-registry.js';
import type { PlannedTransferOptions } from './planned-transfer-options.js';
import { EpochPreconditionFailedError, epochRefusal } from './epoch-precondition.js';
import { endedAnswer, untilPlanApplied } from './plan-waits.js';
import { reprobeDelay } from './reprobe-schedule.js';
import { SourcePositionError, type FeedPosition, type SourcePositions } from './source-positions.js';
import {
  CatchUpTimeoutError,
  IdempotencyKeyMismatchError,
  InvalidTransferRequestError,
  MoveRefusedError,
  OwnershipUnavailableError,
  SourceUnreadableError,
  TransferInProgressError,
  TransferOutcomeUnknownError,
} from './transfer-errors.js';
import type { TransferPlan } from './transfer-plan.js';
import { abandonedMove, assertSameTransfer, describeMove } from './transfer-requests.js';

/** How a new plan goes on once admitted. */
export type Admission =
  /** Its key already decided a move: that record is the answer. */
  | { kind: 'sealed'; record: AuditRecord }
  /** Another member drives its key's registration: the request waits for that outcome. */
  | { kind: 'follow'; intent: TransferIntent }
  /** Registered (or joined) with this member as the driver: the run drives it. */
  | { kind: 'drive' };

export interface TransferRegistrationDeps {
  consensus: OwnershipConsensus;
  audit: AuditStore;
  clock: Clock;
  log: Logger;
  options: PlannedTransferOptions;
  registry: PlanRegistry;
  releases: BackgroundReleases;
  sources: SourcePositions;
  self: () => string;
}

/**
 * The admission of a new plan (seed 003, "Starting a transfer"): its key's earlier decision, the
 * home, the one-transfer rule, the barrier read from the source members, and the registration in
 * the replicated state. Every refusal here registers nothing (or releases what it may have).
 */
export class TransferRegistration {
  constructor(private readonly deps: TransferRegistrationDeps) {}

  /**
   * A new plan first learns whether its key already decided a move (a retry after a commit, a
   * lost answer, a failed projection): that decision is the answer. Otherwise the authority must
   * live at the source, and the transfer is registered in the replicated state with the barrier
   * read from the source members.
   *
   * The decision and the home are read from this member's applied view first, which costs no
   * consensus round: a sealed record there is committed, and a home at the source lets the plan
   * go on, since the registration is checked by the state machine. Only an answer that would
   * refuse the move is confirmed by a linearizable read, so a lagging view never refuses what
   * the cluster would allow.
   */
  async admit(plan: TransferPlan): Promise<Admission> {
    const request = plan.request;
    let sealed: AuditRecord | undefined;
    let home: { home: string; epoch: number } | undefined;
    try {
      // A release of this authority this member proposed lands before a new registration; with no
      // leader in reach it may not land for long, and the request is not left waiting on it.
      const settling = this.deps.releases.pending(request.authority);
      // A member cut off from the majority cannot decide anything: it answers 503 once one
      // linearizable read gives up (the consensus' read timeout), rather than first waiting out a
      // probe timeout on a release that cannot land, then reading the source, then proposing.
      if (settling || this.deps.consensus.leadership().leader === undefined) await this.confirmLeader(plan);
      if (settling && !(await this.settlesWithin(settling, plan))) {
        if (plan.isAbandoned()) throw endedAnswer(plan);
        throw new OwnershipUnavailableError(`an earlier transfer of ${request.authority} is still being released through consensus (no leader in reach): transfer ${plan.id} was not registered; retry with Idempotency-Key ${plan.id}`);
      }
      let { state } = this.deps.consensus.view();
      const seen = state.authorities.get(request.authority);
      const refused = seen?.home !== request.source || epochRefusal(seen, request.expectedEpoch) !== undefined;
      if (refused && !state.pending.has(request.id)) {
        ({ state } = await this.deps.consensus.read());
      }
      sealed = pendingPlanned(state, request.id) ?? plannedOnly(await this.deps.audit.byId(request.id));
      home = state.authorities.get(request.authority);
    } catch (error) {
      if (plan.abandon('the metadata store could not be read')) this.deps.registry.resolve(plan);
      throw error;
    }
    if (plan.isAbandoned()) throw endedAnswer(plan);
    if (sealed) {
      if (plan.abandon('the key already decided a move')) this.deps.registry.resolve(plan);
      assertSameTransfer(request, sealed);
      return { kind: 'sealed', record: sealed };
    }
    // The registration checks the expected epoch again, in the log: this only answers early.
    if (request.expectedEpoch !== undefined && epochRefusal(home, request.expectedEpoch)) {
      if (plan.abandon('the authority is not at the expected epoch')) this.deps.registry.resolve(plan);
      throw new EpochPreconditionFailedError(request.authority, request.expectedEpoch, home?.home, home?.epoch);
    }
    if (!home || home.home !== request.source) {
      if (plan.abandon('the source is not the home')) this.deps.registry.resolve(plan);
      throw home
        ? new MoveRefusedError(request.authority, 'source_not_home', `its home is ${home.home} (epoch ${home.epoch}), not ${request.source}`)
        : new MoveRefusedError(request.authority, 'unknown_authority', `${request.authority} has no home yet; establish it with a transfer_authority command`);
    }
    return this.register(plan);
  }

  /** Reads the barrier from the source and registers the transfer (or joins its registration). */
  private async register(plan: TransferPlan): Promise<Admission> {
    const request = plan.request;
    const existing = this.deps.consensus.view().state.transfers.get(request.authority);
    // Joining the key's own registration needs no barrier; a registration of its own does.
    let joining = existing?.id === request.id;
    if (!joining) {
      // Another transfer registered for the authority is refused before the source is read: a
      // source that cannot answer must not hold a request this member would only refuse later,
      // unseen by the rest of the cluster. Confirmed by a linearizable read (a lagging view may
      // still show a transfer since released); a read that fails leaves it to the registration.
      let running: TransferIntent | undefined;
      try {
        running = existing && (await this.deps.consensus.read()).state.transfers.get(request.authority);
      } catch (error) {
        // No leader in reach: nothing could be registered either, so the answer is a 503 now.
        if (plan.abandon('the registration could not be checked')) this.deps.registry.resolve(plan);
        throw error;
      }
      if (running && running.id !== request.id) {
        if (plan.abandon('another transfer is registered')) this.deps.registry.resolve(plan);
        throw new TransferInProgressError(request.authority, running.id);
      }
    }
    let result: RegisterTransferResult;
    let appliedAt: number;
    for (;;) {
      let positions: FeedPosition[] = [];
      if (!joining) {
        positions = await this.readSource(plan);
        if (positions.length === 0) {
          if (plan.abandon('no source member')) this.deps.registry.resolve(plan);
          throw new InvalidTransferRequestError(`the roster lists no member in ${request.source}: no source can freeze ${request.authority}`);
        }
      }
      try {
        const receipt = await this.deps.consensus.propose({
          type: 'register_transfer',
          ...request,
          driver: this.deps.self(),
          sources: positions,
          deadline: plan.deadline,
        });
        result = receipt.result as RegisterTransferResult;
        appliedAt = receipt.position.index;
      } catch (error) {
        // Called off while the proposal was in flight (a cancel answered 204 from the plan): the
        // run answers the seed's 409, whatever consensus said. It never proposes its commit, so it
        // cannot have committed; what it may have registered is released behind the answer.
        if (plan.isAbandoned()) {
          this.deps.releases.release(plan, 'cancelled');
          throw endedAnswer(plan);
        }
        if (plan.abandon('the registration did not complete')) this.deps.registry.resolve(plan);
        if (error instanceof NotAppendedError) {
          const what = joining ? `this request did not join the registration of transfer ${plan.id}` : `transfer ${plan.id} was not registered`;
          throw new OwnershipUnavailableError(`${what} (${error.reason}): nothing runs here; retry with Idempotency-Key ${plan.id}`);
        }
        // It may have been registered: released behind this answer, so nothing is left blocking.
        this.deps.releases.release(plan, 'abandoned');
        throw new TransferOutcomeUnknownError(plan.id, error);
      }
      // The registration this member's view showed was released before the join applied: the
      // transfer registers anew, with the barrier read from the source like any other.
      if (!result.ok && result.reason === 'barrier_unread' && joining) {
        joining = false;
        continue;
      }
      break;
    }
    if (!result.ok) {
      if (plan.abandon('the registration was refused')) this.deps.registry.resolve(plan);
      switch (result.reason) {
        case 'committed':
          assertSameTransfer(request, result.record);
          return { kind: 'sealed', record: result.record };
        case 'transfer_in_progress':
          throw new TransferInProgressError(request.authority, result.running);
        case 'key_names_another_transfer':
          throw new IdempotencyKeyMismatchError(request.id, `it moves ${describeMove(result.running)}`);
        case 'key_abandoned':
          throw new IdempotencyKeyMismatchError(request.id, abandonedMove(result.abandoned));
        case 'precondition_failed':
          throw new EpochPreconditionFailedError(request.authority, request.expectedEpoch ?? 0, result.home, result.epoch);
        case 'barrier_unread':
          // Only a join is proposed without source positions, and a refused join reads them above.
          throw new OwnershipUnavailableError(`transfer ${plan.id} was not registered (no barrier read): nothing runs; retry with Idempotency-Key ${plan.id}`);
        default:
          throw new MoveRefusedError(request.authority, result.reason, `the ownership state refused the transfer (${result.reason}, home ${result.home ?? 'none'})`);
      }
    }
    // Answered by the leader, maybe before this member applied it: what follows reads this
    // member's view, which must show the registration first.
    try {
      await untilPlanApplied(this.deps, plan, appliedAt);
    } catch (error) {
      // Cancelled meanwhile: a cancel that found this member's view showing the registration
      // left its release to this run, as below.
      if (result.intent.driver === this.deps.self()) this.deps.releases.release(plan, 'cancelled');
      throw error;
    }
    if (result.intent.driver !== this.deps.self()) return { kind: 'follow', intent: result.intent };
    plan.markRegistered();
    if (result.existing) plan.joinDeadline(result.intent.deadline);
    plan.follow(result.intent);
    // The abandoned window keeps its record: a cancel that abandoned this plan while its
    // registration was in flight answered 204 from it, and a repeat must answer the same.
    if (plan.isAbandoned()) {
      this.deps.releases.release(plan, 'cancelled');
      throw endedAnswer(plan);
    }
    return { kind: 'drive' };
  }

  /**
   * The source members' acknowledged serials, re-read on the re-probe schedule for at most one
   * probe timeout. A source that still cannot answer gets a 503 (nothing registered, retry under
   * the key): the request is not left waiting unregistered, where no other member sees it, the
   * one-transfer rule cannot name it and a cancel elsewhere cannot call it off. A budget shorter
   * than a probe timeout runs out first, and the transfer times out (504) as before.
   */
  private async readSource(plan: TransferPlan): Promise<FeedPosition[]> {
    const { source } = plan.request;
    const until = this.probeTimeoutFrom(plan);
    for (let attempt = 0; ; attempt++) {
      const remaining = until - this.deps.clock.now();
      try {
        if (remaining <= 0) throw new Error('no time left to read it');
        const positions = await this.deps.sources.read(source, { signal: plan.signal, timeoutMs: remaining });
        if (plan.isAbandoned()) throw endedAnswer(plan);
        return positions;
      } catch (error) {
        if (plan.isAbandoned()) throw endedAnswer(plan);
        plan.step({ type: 'source_read', at: this.deps.clock.now(), ok: false });
        const member = error instanceof SourcePositionError ? error.member : source;
        const wait = Math.min(reprobeDelay(this.deps.options.schedule, attempt), until - this.deps.clock.now());
        if (wait <= 0) {
          // A budget shorter than a probe timeout ran out first: the transfer timed out (504).
          if (until >= plan.deadline) {
            if (plan.abandon('the source never told its serial')) this.deps.registry.abandon(plan);
            this.deps.log.info({ transfer: plan.id, source: member, err: (error as Error).message }, 'transfer timed out reading the source serial');
            throw new CatchUpTimeoutError(plan.id, plan.authority, undefined, undefined, this.deps.options.budgetMs);
          }
          if (plan.abandon('the source never told its serial')) this.deps.registry.resolve(plan);
          this.deps.log.info({ transfer: plan.id, source: member, err: (error as Error).message }, 'transfer refused: the source serial could not be read');
          throw new SourceUnreadableError(plan.id, plan.authority, source, error instanceof SourcePositionError ? error.member : undefined, (error as Error).message);
        }
        this.deps.log.debug({ transfer: plan.id, source: member, err: (error as Error).message }, 'source serial unreadable; retrying');
        try {
          await this.deps.clock.sleep(wait, plan.signal);
        } catch {
          throw endedAnswer(plan);
        }
      }
    }
  }

  /**
   * One linearizable read, bounded by the consensus' own read timeout: no leader confirms it, and
   * the request answers 503 (nothing registered, retry under its key). A cancel ends it with 409.
   */
  private async confirmLeader(plan: TransferPlan): Promise<void> {
    try {
      await this.deps.consensus.read({ signal: plan.signal });
    } catch (error) {
      if (plan.isAbandoned()) throw endedAnswer(plan);
      throw new OwnershipUnavailableError(`member ${this.deps.self()} reaches no leader (${(error as Error).message}): transfer ${plan.id} was not registered; retry with Idempotency-Key ${plan.id}`, { cause: error });
    }
  }

  /** The end of a wait bounded by one probe timeout and the plan's budget. */
  private probeTimeoutFrom(plan: TransferPlan): number {
    return Math.min(plan.deadline, this.deps.clock.now() + this.deps.options.probeTimeoutMs);
  }

  /** Whether `settling` resolves within a probe timeout (and the plan's budget); false if not. */
  private async settlesWithin(settling: Promise<unknown>, plan: TransferPlan): Promise<boolean> {
    const wait = Math.max(0, this.probeTimeoutFrom(plan) - this.deps.clock.now());
    const timer = new AbortController();
    const timeout = this.deps.clock.sleep(wait, AbortSignal.any([timer.signal, plan.signal])).then(
      () => false,
      () => false,
    );
    const settled = await Promise.race([settling.then(() => true, () => true), timeout]);
    timer.abort();
    return settled;
  }
}
