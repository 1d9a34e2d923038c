import { type AuditRecord, NotAppendedError } from '@baton/contracts';
import type { BackgroundReleases } from './background-releases.js';
import { awaitCatchUp } from './catch-up.js';
import { waitForIntent } from './intent-wait.js';
import type { CommitPlannedTransferResult, OwnershipCommand, TransferLifecycleResult } from './ownership.js';
import { finalsComplete } from './ownership.js';
import type { PlanRegistry } from './plan-registry.js';
import { endedAnswer, releasedAnswer, releasedBecause, untilPlanApplied } from './plan-waits.js';
import type { PlannedTransferDeps, PlannedTransferOptions } from './planned-transfer-options.js';
import { untilScheduledStart } from './scheduled-start.js';
import type { SealedRecords } from './sealed-records.js';
import type { Effect } from './transfer-core.js';
import {
  AuditProjectionError,
  CatchUpTimeoutError,
  ClockSkewError,
  CommitRefusedError,
  MoveRefusedError,
  OwnershipUnavailableError,
  TransferOutcomeUnknownError,
} from './transfer-errors.js';
import type { TransferPlan } from './transfer-plan.js';

export interface TransferRunDeps {
  deps: PlannedTransferDeps;
  options: PlannedTransferOptions;
  registry: PlanRegistry;
  releases: BackgroundReleases;
  sealed: SealedRecords;
}

/**
 * The driver's half of a registered transfer's run: it asks the plan's core what to do next
 * (`ready`), takes it (`advance`), performs it (probe the target, propose a freeze, a thaw or the
 * commit, answer) and feeds what came back with `step`. Every decision is the core's; what is
 * here waits on the network, the consensus and the clock.
 */
export class TransferRun {
  constructor(private readonly d: TransferRunDeps) {}

  /** Runs a registered plan to its outcome: the sealed record, or the typed error its request answers. */
  async drive(plan: TransferPlan): Promise<AuditRecord> {
    await this.untilStart(plan);
    for (;;) {
      plan.step({ type: 'tick', now: this.d.deps.clock.now() });
      const effects = plan.core.ready();
      plan.core.advance();
      // A plan with an outcome already answered has nothing left to do: its run ends as it ended.
      if (effects.length === 0) throw endedAnswer(plan);
      for (const effect of effects) {
        const record = await this.perform(plan, effect);
        if (record) return record;
      }
    }
  }

  private async perform(plan: TransferPlan, effect: Effect): Promise<AuditRecord | undefined> {
    const { clock, log, probe } = this.d.deps;
    switch (effect.type) {
      case 'probe':
        await awaitCatchUp(plan, {
          clock,
          probe,
          probeTimeoutMs: this.d.options.probeTimeoutMs,
          schedule: effect.schedule === 'frozen' ? this.d.options.freezeSchedule : this.d.options.schedule,
          waitMs: this.d.options.frontierWaitMs,
          until: effect.until,
        });
        return undefined;
      case 'propose':
        if (effect.command === 'commit') return this.commit(plan);
        if (effect.command === 'freeze') return this.freeze(plan);
        log.info({ transfer: plan.id, barrier: plan.barrier, frontier: plan.frontier }, 'freeze budget spent; lifting the freeze');
        return this.thaw(plan);
      case 'release':
        this.d.registry.abandon(plan);
        this.d.releases.release(plan, effect.why);
        log.info({ transfer: plan.id, barrier: plan.barrier, frontier: plan.frontier }, 'transfer timed out');
        return undefined;
      case 'answer':
        if (effect.outcome === 'timed_out') throw new CatchUpTimeoutError(plan.id, plan.authority, plan.barrier, plan.frontier, this.d.options.budgetMs);
        throw endedAnswer(plan);
    }
  }

  /** A scheduled transfer waits for its start, then has the clocks checked again: they were when it registered, maybe days ago. */
  private async untilStart(plan: TransferPlan): Promise<void> {
    const waited = await untilScheduledStart(plan, this.d.deps.clock, this.d.deps.log);
    const skewed = waited ? this.d.deps.clocks?.exceeded() : undefined;
    if (skewed && plan.abandon(`a peer clock is past the skew bound at its start (${skewed.peer})`)) {
      this.d.registry.abandon(plan);
      this.d.releases.release(plan, 'abandoned');
      throw new ClockSkewError(plan.id, skewed.peer, skewed.offsetMs, skewed.boundMs, 'at its start');
    }
  }

  /**
   * The target reached the barrier: freeze the authority at the source and wait until every
   * source member recorded its final serial; the plan then catches the target up on those.
   */
  private async freeze(plan: TransferPlan): Promise<undefined> {
    const { consensus, clock, log } = this.d.deps;
    const budget = this.d.options.freezeBudgetMs;
    const intent = consensus.view().state.transfers.get(plan.authority);
    if (!(intent?.id === plan.id && intent.frozen)) {
      const { result: frozen, index } = await this.proposeForPlan(plan, { type: 'freeze_transfer', id: plan.id, authority: plan.authority, thawBy: clock.now() + budget });
      if (!frozen.ok) return this.lost(plan, frozen.reason);
      plan.step({ type: 'proposed', command: 'freeze', outcome: 'applied', at: clock.now() });
      // The freeze holds writes: waiting for this member to apply it is bounded like the freeze.
      const applied = await untilPlanApplied(this.d.deps, plan, index, Math.min(plan.deadline, plan.frozenSince! + budget));
      if (applied === 'timed_out') {
        log.info({ transfer: plan.id }, 'this member did not apply its freeze within the freeze budget; lifting it');
        return this.thaw(plan);
      }
    } else {
      plan.step({ type: 'proposed', command: 'freeze', outcome: 'applied', at: clock.now() });
    }
    const outcome = await waitForIntent(consensus, clock, plan.authority, (i) => i?.id !== plan.id || !i.frozen || finalsComplete(i), {
      until: Math.min(plan.deadline, plan.frozenSince! + budget),
      signal: plan.signal,
    });
    if (outcome === 'aborted' || plan.isAbandoned()) throw endedAnswer(plan);
    const now = consensus.view().state.transfers.get(plan.authority);
    if (now?.id !== plan.id) return this.lost(plan, 'not_registered');
    if (outcome === 'timed_out' || !now.frozen) {
      // A source member did not answer in time (or the freeze was lifted): writes resume.
      if (now.frozen) await this.thaw(plan);
      if (clock.now() >= plan.deadline && plan.abandon('catch-up budget exhausted')) {
        this.d.registry.abandon(plan);
        this.d.releases.release(plan, 'timed_out');
        throw new CatchUpTimeoutError(plan.id, plan.authority, plan.barrier, plan.frontier, this.d.options.budgetMs);
      }
      plan.follow(consensus.view().state.transfers.get(plan.authority) ?? now);
      return undefined;
    }
    plan.follow(now);
    return undefined;
  }

  private async thaw(plan: TransferPlan): Promise<undefined> {
    const { result: thawed } = await this.proposeForPlan(plan, { type: 'thaw_transfer', id: plan.id, authority: plan.authority });
    if (!thawed.ok && thawed.reason === 'not_registered') return this.lost(plan, 'not_registered');
    plan.step({ type: 'proposed', command: 'thaw', outcome: 'applied' });
    if (thawed.ok) plan.follow(thawed.intent);
    return undefined;
  }

  /** The registration is gone (cancelled at another member, expired, a failover): the run ends with 409. */
  private lost(plan: TransferPlan, reason: string): never {
    if (plan.abandon(`the registration is gone (${reason})`)) this.d.registry.abandon(plan);
    throw endedAnswer(plan);
  }

  /**
   * A freeze or thaw of the plan's transfer. When consensus cannot take it, or its outcome is
   * unknown, the run answers 503 ownership_unavailable at once (never "may have committed": the
   * plan proposed no commit) and the plan stays unclaimed (cancellable, resumable under its key);
   * a freeze that may have applied regardless is lifted behind it (see sweep). The plan keeps the
   * state its readings gave it: a thaw refused while the target is short of the final serials
   * leaves it AwaitingCatchUp, so the resumed run probes before it freezes the writes again.
   */
  private async proposeForPlan(plan: TransferPlan, command: OwnershipCommand & { type: 'freeze_transfer' | 'thaw_transfer' }): Promise<{ result: TransferLifecycleResult; index: number }> {
    if (plan.isAbandoned()) throw endedAnswer(plan);
    try {
      const receipt = await this.d.deps.consensus.propose(command);
      return { result: receipt.result as TransferLifecycleResult, index: receipt.position.index };
    } catch (error) {
      if (plan.isAbandoned()) throw endedAnswer(plan);
      const step = command.type === 'freeze_transfer' ? 'freeze' : 'thaw';
      plan.step({ type: 'proposed', command: step, outcome: 'failed' });
      if (error instanceof NotAppendedError) {
        throw new OwnershipUnavailableError(`transfer ${plan.id} could not ${step} its source (${error.reason}); it is not claimed: retry with Idempotency-Key ${plan.id} or cancel it`);
      }
      // Only the freeze or thaw is in doubt, never the move: an unclaimed plan has proposed no
      // commit. A freeze that did apply is lifted behind this answer (see sweep).
      throw new OwnershipUnavailableError(`transfer ${plan.id} did not commit: whether its ${step} applied is not known (${(error as Error).message}), and a freeze no run holds is lifted; it is not claimed: retry with Idempotency-Key ${plan.id} or cancel it`, { cause: error });
    }
  }

  private async commit(plan: TransferPlan): Promise<AuditRecord> {
    const { consensus, clock, log } = this.d.deps;
    let result: CommitPlannedTransferResult;
    try {
      // The driver's clock dates the record; it is no part of the fingerprint, so a retry still replays.
      const at = Math.max(0, Math.floor(clock.now()));
      const receipt = await consensus.propose({ ...plan.command(), observed: { at } }, { idempotencyKey: plan.id });
      result = receipt.result as CommitPlannedTransferResult;
    } catch (error) {
      if (error instanceof NotAppendedError) {
        if (error.reason === 'key_reused') {
          // The key already decided a transfer (a retry through another member, with its own
          // barrier): that decision is the answer if it is this move.
          const sealed = await this.d.sealed.find(plan.id).catch(() => undefined);
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
      plan.step({ type: 'proposed', command: 'commit', outcome: 'unknown' });
      log.warn({ transfer: plan.id, err: (error as Error).message }, 'transfer outcome unknown; resolving it in the background');
      throw new TransferOutcomeUnknownError(plan.id, error);
    }
    if (!result.ok) {
      // The key may have decided this very move already (an earlier attempt, or a retry admitted
      // on a view that had not seen it) and left the idempotency window since: the durable audit
      // then knows the move, and this refusal is that move seen from after.
      const sealed = await this.d.sealed.find(plan.id).catch(() => undefined);
      if (sealed && plan.sameRequest({ ...sealed })) return this.settle(plan, sealed);
      if (result.reason === 'not_frozen') {
        // The freeze was lifted under the claim (by another member, past its thaw time): the
        // commit did not apply, nothing moved; freeze again.
        plan.release();
        plan.follow(consensus.view().state.transfers.get(plan.authority)!);
        return this.drive(plan);
      }
      if (result.reason === 'not_registered') {
        // Released before the commit applied: by a cancel (at any member), past its deadline, or
        // by a failover. The abandoned window follows the log and says which; "cancelled" only
        // for a cancel, never for what merely took the registration away.
        const why = releasedBecause(consensus.view().state, this.d.registry, plan.id);
        plan.abandonClaimed('released in the replicated state');
        this.d.registry.abandon(plan);
        throw releasedAnswer(plan, why ?? 'the registration was gone when the commit applied', this.d.options.budgetMs, plan.barrier);
      }
      this.d.registry.resolve(plan);
      throw new MoveRefusedError(plan.authority, result.reason, `the ownership state refused the move (${result.reason}, home ${result.home ?? 'none'})`);
    }
    return this.settle(plan, result.record);
  }

  private settle(plan: TransferPlan, record: AuditRecord): Promise<AuditRecord> {
    plan.markCommitted();
    this.d.registry.resolve(plan);
    this.d.registry.abandoned.forget(plan.authority);
    this.d.deps.log.info({ transfer: record.id, authority: record.authority, epoch: record.epoch }, 'transfer committed');
    return this.projectForAnswer(record);
  }

  async projectForAnswer(record: AuditRecord): Promise<AuditRecord> {
    try {
      await this.d.deps.projection.project(record);
    } catch (error) {
      throw new AuditProjectionError(record.id, error);
    }
    return record;
  }
}
