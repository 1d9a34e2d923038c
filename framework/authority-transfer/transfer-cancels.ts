import type { Logger } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import type { BackgroundReleases } from './background-releases.js';
import type { ReleaseTransferCommand, TransferLifecycleResult } from './ownership.js';
import { latestAbandoned } from './ownership-index.js';
import type { PlanRegistry } from './plan-registry.js';
import type { SealedRecords } from './sealed-records.js';
import { TransferCommittedError, TransferCommittingError, TransferNotFoundError } from './transfer-errors.js';
import type { TransferPlan } from './transfer-plan.js';
import type { UndrivenTransfers } from './undriven-transfers.js';

export interface TransferCancelsDeps {
  consensus: OwnershipConsensus;
  log: Logger;
  registry: PlanRegistry;
  releases: BackgroundReleases;
  undriven: UndrivenTransfers;
  sealed: SealedRecords;
  self: () => string;
}

/**
 * DELETE /availability/v1/transfers/{authority} (seed 003, "States and cancellation"): from the
 * plan on the member driving the transfer, through the replicated state anywhere else.
 */
export class TransferCancels {
  constructor(private readonly deps: TransferCancelsDeps) {}

  /**
   * Cancels the authority's transfer. Resolves when it was abandoned (204), including a repeated
   * cancel within the abandoned window; throws TransferCommittedError (409) when the move
   * committed or is committing, TransferNotFoundError (404), or StoreUnavailableError /
   * ReadUnavailableError (503) when the state cannot be read.
   *
   * On the member driving it, the answer comes from the plan (no probe nor consensus round trip
   * in the way) and the replicated registration is released behind it: the plan, abandoned, can
   * never propose the commit. Elsewhere it is a release through consensus, ordered in the log
   * against the commit, so exactly one of the two takes effect.
   */
  async cancel(authority: string): Promise<void> {
    const plan = this.deps.registry.get(authority);
    if (plan && !plan.follower) {
      if (plan.cancel('cancelled by an administrator')) {
        this.deps.undriven.forgetExpiry(plan);
        this.deps.registry.abandon(plan);
        if (plan.registered) this.deps.releases.release(plan, 'cancelled');
        this.deps.log.info({ transfer: plan.id, authority }, 'transfer cancelled');
        if (plan.registered) return;
        // A plan not registered yet is the authority's transfer only once its own registration
        // is applied (this member drives it, and the abandoned plan never proposes its commit).
        // Anything else is called off through the replicated state: another member's transfer,
        // the same key registered by the member it was sent to first, or one this member's view
        // does not show yet (a linearizable read finds it).
        // Its proposal (a reissue joining that registration, say) may still be in flight: the
        // registration is released behind this answer, as for a registered plan, rather than
        // left to its deadline.
        const other = this.deps.consensus.view().state.transfers.get(authority);
        if (other?.id === plan.id && other.driver === this.deps.self()) {
          this.deps.releases.release(plan, 'cancelled');
          return;
        }
        return this.cancelElsewhere(authority);
      }
      if (plan.state === 'Committing' && !plan.unresolved) throw new TransferCommittingError(authority, plan.id);
      // Claimed and left without a known outcome: the release decides, in log order.
      const released = await this.release({ type: 'release_transfer', authority, id: plan.id, why: 'cancelled' });
      if (released.ok) {
        plan.abandonClaimed('cancelled by an administrator');
        this.deps.undriven.forgetResolution(plan);
        this.deps.registry.abandon(plan);
        throw new TransferNotFoundError(authority);
      }
      const sealed = await this.deps.sealed.find(plan.id);
      if (sealed) {
        this.deps.registry.resolve(plan);
        throw new TransferCommittedError(authority, sealed.id);
      }
      throw new TransferNotFoundError(authority);
    }
    // A repeated cancel of a transfer abandoned here is confirmed by the linearizable read too:
    // this member's view may not show a newer transfer registered elsewhere meanwhile, which a
    // 204 from the window would leave running.
    return this.cancelElsewhere(authority, plan);
  }

  /**
   * A cancel of a transfer driven elsewhere (or by nobody since a restart): a release of the
   * registered transfer by its id, ordered in the log against its commit. A linearizable read
   * first, so a cancel of nothing appends nothing. The abandoned window, looked up once the
   * read has brought this member's view up to date (a move committed since forgets it), names
   * the authority's latest abandoned transfer: a repeated cancel of it answers 204.
   */
  private async cancelElsewhere(authority: string, follower?: TransferPlan): Promise<void> {
    const { state } = await this.deps.consensus.read();
    const intent = state.transfers.get(authority);
    // The replicated state names the latest abandoned transfer alike on every member (and after
    // a restart); this member's window also one called off before its registration applied.
    const abandonedId = latestAbandoned(state, authority)?.id ?? this.deps.registry.abandoned.get(authority);
    // Whatever is registered is released, even under the id the window names: that key may have
    // been reissued since, and a release of one already on its way changes nothing.
    if (intent) {
      const released = await this.release({ type: 'release_transfer', authority, id: intent.id, why: 'cancelled' });
      if (released.ok) {
        this.deps.registry.abandoned.remember(authority, intent.id, intent);
        if (follower) this.endFollower(follower);
        this.deps.log.info({ transfer: intent.id, authority, driver: intent.driver }, 'transfer cancelled through the replicated state');
        return;
      }
      // It left the replicated state between the read and the release: it committed (the move
      // stands, 409), or another member released it (it was called off: 204).
      const sealed = await this.deps.sealed.find(intent.id);
      if (sealed) throw new TransferCommittedError(authority, sealed.id);
      this.deps.registry.abandoned.remember(authority, intent.id, intent);
      return;
    }
    if (abandonedId !== undefined) return;
    const committed = await this.deps.sealed.latest(authority);
    if (committed) throw new TransferCommittedError(authority, committed.id);
    throw new TransferNotFoundError(authority);
  }

  private async release(command: ReleaseTransferCommand): Promise<TransferLifecycleResult> {
    return (await this.deps.consensus.propose(command)).result as TransferLifecycleResult;
  }

  /** A request that only waited on another member's run of its key: it ends with that run. */
  private endFollower(plan: TransferPlan): void {
    plan.abandon('followed to its end');
    this.deps.registry.resolve(plan);
  }
}
