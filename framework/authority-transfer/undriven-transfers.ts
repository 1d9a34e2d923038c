import type { Clock, Logger, Timer } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import type { BackgroundReleases } from './background-releases.js';
import type { PlanRegistry } from './plan-registry.js';
import type { PlannedTransferOptions } from './planned-transfer-options.js';
import type { TransferPlan } from './transfer-plan.js';

export interface UndrivenTransfersDeps {
  consensus: OwnershipConsensus;
  clock: Clock;
  log: Logger;
  options: PlannedTransferOptions;
  registry: PlanRegistry;
  releases: BackgroundReleases;
  self: () => string;
  /** Starts a run of the plan again (a resolution is what a retry under its key does). */
  launch: (plan: TransferPlan) => Promise<unknown>;
}

/**
 * Transfers no run is driving: a plan resting after a refusal (cancellable and resumable until
 * its deadline, then abandoned), a plan claimed without a known outcome (resolved in the
 * background under its key), and registrations whose driver is gone (swept by any member).
 */
export class UndrivenTransfers {
  private readonly expiries = new Map<TransferPlan, Timer>();
  /** Plans claimed without a known outcome, each with its next resolution attempt. */
  private readonly resolutions = new Map<TransferPlan, { timer: Timer; attempt: number }>();
  private sweepTimer: Timer | undefined;
  private stopped = false;
  /** A track_abandoned_keys proposal is in flight. */
  private tracking = false;

  constructor(private readonly deps: UndrivenTransfersDeps) {}

  start(): void {
    this.armSweep(0);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.expiries.values()) timer.cancel();
    this.expiries.clear();
    for (const { timer } of this.resolutions.values()) timer.cancel();
    this.resolutions.clear();
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
  }

  /** Plans claimed whose commit outcome is still unknown (being resolved in the background). */
  get unresolvedCount(): number {
    return this.resolutions.size;
  }

  /**
   * Registered transfers whose driver is gone: one past its thaw time keeps the source frozen,
   * one past its deadline blocks the authority. Any member lifts or releases them; the driver's
   * own, left without a plan by a restart, are thawed at once (see README: the operator
   * reissues the key on that member to resume, or cancels it anywhere). The sweep reads only
   * the transfers in flight.
   */
  private sweep(): void {
    if (this.stopped) return;
    this.trackAbandonedKeys();
    const now = this.deps.clock.now();
    const grace = this.deps.options.expiryGraceMs;
    for (const intent of this.deps.consensus.view().state.transfers.values()) {
      if (this.deps.releases.has(intent.authority)) continue;
      const local = this.deps.registry.get(intent.authority);
      const mine = intent.driver === this.deps.self();
      if (mine && local && !local.follower) {
        // A plan resting without a run (a refusal left it Ready) holds no freeze.
        if (!local.run && intent.id === local.id && intent.frozen && (local.state === 'Ready' || local.state === 'AwaitingCatchUp')) {
          this.deps.releases.lift(intent, { type: 'thaw_transfer', authority: intent.authority, id: intent.id });
        }
        continue;
      }
      if (now > intent.deadline + (mine ? 0 : grace)) {
        this.deps.releases.lift(intent, { type: 'release_transfer', authority: intent.authority, id: intent.id, why: 'expired' });
      } else if (intent.frozen && (mine || now > (intent.thawBy ?? 0) + grace)) {
        this.deps.releases.lift(intent, { type: 'thaw_transfer', authority: intent.authority, id: intent.id });
      }
    }
    this.armSweep(this.deps.options.sweepIntervalMs);
  }

  /**
   * A state restored from a snapshot older than abandoned-key tracking starts it with one log
   * entry, appended by the leader, so every member tracks from the same point (ownership.ts).
   */
  private trackAbandonedKeys(): void {
    if (this.tracking || this.deps.consensus.view().state.abandonedTracked || !this.deps.consensus.leadership().isLeader) return;
    this.tracking = true;
    void this.deps.consensus
      .propose({ type: 'track_abandoned_keys' })
      .then(() => this.deps.log.info('abandoned transfer keys are tracked in the replicated state from here on'))
      .catch((error: unknown) => this.deps.log.debug({ err: (error as Error).message }, 'abandoned-key tracking not started yet; the next sweep retries'))
      .finally(() => (this.tracking = false));
  }

  private armSweep(delay: number): void {
    if (this.stopped) return;
    this.sweepTimer = this.deps.clock.setTimer(delay, () => this.sweep());
  }

  /**
   * A plan left Ready after a refusal has no run: it stays cancellable and resumable under its
   * key until its deadline, then it is abandoned so it cannot block the authority forever. Its
   * freeze, if it held one, is lifted at once: writes must not wait on an operator's retry.
   */
  armExpiry(plan: TransferPlan): void {
    if (plan.run || (plan.state !== 'Ready' && plan.state !== 'AwaitingCatchUp')) return;
    if (this.deps.registry.get(plan.authority) !== plan || plan.follower) return;
    if (plan.frozen) {
      const intent = this.deps.consensus.view().state.transfers.get(plan.authority);
      if (intent?.id === plan.id) this.deps.releases.lift(intent, { type: 'thaw_transfer', authority: plan.authority, id: plan.id });
      plan.step({ type: 'proposed', command: 'thaw', outcome: 'lifted' });
    }
    const delay = Math.max(0, plan.deadline - this.deps.clock.now());
    this.expiries.set(
      plan,
      this.deps.clock.setTimer(delay, () => {
        this.expiries.delete(plan);
        if (!plan.run && plan.abandon('budget exhausted while Ready')) {
          this.deps.registry.abandon(plan);
          this.deps.releases.release(plan, 'timed_out');
        }
      }),
    );
  }

  /**
   * A claimed plan left without a known outcome blocks its authority until it is resolved. The
   * resolution is what a retry under the same key does: propose the same command under the same
   * idempotency key again. If an earlier attempt committed, consensus replays that decision (or
   * the audit holds it); if none did, this one commits the move the operator ordered and could
   * no longer cancel here (a cancel at another member releases the registration first, and the
   * commit is then refused). Either way the key reaches its one outcome. Attempts back off up to
   * `resolution.maxDelayMs`.
   */
  armResolution(plan: TransferPlan): void {
    if (this.stopped || plan.run || plan.state !== 'Committing' || !plan.unresolved) return;
    if (this.deps.registry.get(plan.authority) !== plan || this.resolutions.has(plan)) return;
    const attempt = (plan.resolutionAttempts = (plan.resolutionAttempts ?? 0) + 1);
    const { initialDelayMs, maxDelayMs } = this.deps.options.resolution;
    const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt - 1, 20));
    const timer = this.deps.clock.setTimer(delay, () => {
      this.resolutions.delete(plan);
      if (plan.run || plan.state !== 'Committing' || this.deps.registry.get(plan.authority) !== plan) return;
      this.deps.log.info({ transfer: plan.id, attempt }, 'resolving a transfer whose commit outcome is unknown');
      this.deps.launch(plan).catch(() => undefined);
    });
    this.resolutions.set(plan, { timer, attempt });
  }

  forgetResolution(plan: TransferPlan): void {
    this.resolutions.get(plan)?.timer.cancel();
    this.resolutions.delete(plan);
  }

  forgetExpiry(plan: TransferPlan): void {
    this.expiries.get(plan)?.cancel();
    this.expiries.delete(plan);
  }
}
