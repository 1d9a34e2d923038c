import type { Clock, Logger } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import type { OwnershipCommand, ReleaseTransferCommand, TransferIntent } from './ownership.js';

export interface BackgroundReleasesDeps {
  consensus: OwnershipConsensus;
  clock: Clock;
  log: Logger;
  /** This member's id: it releases only registrations it drives. */
  self: () => string;
  /** The engine stopped: no more attempts. */
  stopped: () => boolean;
}

/**
 * The releases and thaws this member proposed behind an answer already given (a cancel answered
 * from the plan, a timeout, a freeze no run holds), by authority, until each applied or gave up.
 * A new run of the authority on this member waits for it, so it never finds its own abandoned
 * transfer in the way; the sweep leaves an authority alone while one is on its way.
 */
export class BackgroundReleases {
  private readonly settling = new Map<string, Promise<void>>();

  constructor(private readonly deps: BackgroundReleasesDeps) {}

  /** What this member still has on its way for the authority, if anything. */
  pending(authority: string): Promise<void> | undefined {
    return this.settling.get(authority);
  }

  has(authority: string): boolean {
    return this.settling.has(authority);
  }

  /**
   * Unregisters `transfer` (this member drives it): retried until it applied or the registration
   * is gone, after whatever this member already had on its way for the authority.
   */
  release(transfer: { id: string; authority: string }, why: ReleaseTransferCommand['why']): void {
    const { id, authority } = transfer;
    const previous = this.settling.get(authority) ?? Promise.resolve();
    const work = previous.then(async () => {
      for (let attempt = 0; attempt < 40 && !this.deps.stopped(); attempt++) {
        try {
          // Gone for the cluster, not only from this member's view, which may lag the leader's.
          if (attempt > 0 && (await this.deps.consensus.read()).state.transfers.get(authority)?.id !== id) return;
          // Only a registration this member drives: the same key registered by another member
          // (a retry there after this one's outcome was unknown) is that member's to end.
          await this.deps.consensus.propose({ type: 'release_transfer', authority, id, driver: this.deps.self(), why });
          return;
        } catch (error) {
          this.deps.log.debug({ transfer: id, err: (error as Error).message }, 'release not applied yet; retrying');
          await this.deps.clock.sleep(Math.min(2_000, 20 * 2 ** Math.min(attempt, 7)));
        }
      }
    });
    this.track(authority, work);
  }

  /** One attempt at lifting a registration no run drives (a thaw, or a release past its deadline). */
  lift(intent: TransferIntent, command: OwnershipCommand): void {
    const work = this.deps.consensus.propose(command).then(
      () => this.deps.log.info({ transfer: intent.id, authority: intent.authority, command: command.type }, 'lifted a transfer its driver no longer drives'),
      () => undefined,
    );
    this.track(intent.authority, work);
  }

  private track(authority: string, work: Promise<void>): void {
    const settled = work.finally(() => {
      if (this.settling.get(authority) === settled) this.settling.delete(authority);
    });
    this.settling.set(authority, settled);
  }
}
