import type { OwnershipConsensus } from './audit-projection.js';
import type { ChangeFeed, FeedEntry } from './change-feed.js';
import type { HomeCatchUp } from './home-catch-up.js';
import type { OwnershipState } from './ownership.js';
import { AuthorityFrozenError, NotHomeError, StaleEpochError } from './transfer-errors.js';

/** A write admitted under an epoch, not yet finalised. */
export interface AdmittedWrite {
  authority: string;
  epoch: number;
}

/**
 * The fence: writes to an authority are accepted only at its home datacenter under its current
 * epoch, and not while a planned transfer has frozen it. A write is admitted against the local
 * view, then finalised only after a linearizable read confirms the epoch still stands; a
 * transfer that committed in between makes it stale, so a former home never finalises a write
 * against an authority it no longer owns. Finalising appends to this member's change feed,
 * which is what a transfer's barrier and final serial count.
 *
 * The freeze is checked against the linearizable read and against this member's applied view in
 * the same synchronous step that assigns the serial: once this member applied a freeze, no write
 * to the authority gets a serial, so the final serial it records after applying it covers every
 * write it ever acknowledged there under the old epoch. A frozen authority answers 503 with
 * Retry-After (the write is refused, not held): the freeze lasts until the move commits (the
 * client then learns the new home: 421) or is lifted.
 *
 * At the new home, a write under the epoch a planned move minted is also refused (503) until this
 * member's replicas hold the final serials the move recorded (see HomeCatchUp): the barrier holds
 * even if the target lost its replica after the driver last read it.
 */
export class WriteFence {
  constructor(
    private readonly consensus: OwnershipConsensus,
    private readonly feed: ChangeFeed,
    /** The datacenter this member serves. */
    private readonly datacenter: string,
    /** What this member must hold of the source feeds before it writes as a new home. */
    private readonly catchUp: HomeCatchUp,
    /** The public addresses of a datacenter's members, named in a refusal so a client can go there. */
    private readonly publicUrlsOf: (datacenter: string) => string[] = () => [],
  ) {}

  /** Checks the write against the local view; throws NotHomeError, StaleEpochError, AuthorityFrozenError or HomeCatchingUpError. */
  admit(authority: string, epoch: number): AdmittedWrite {
    this.check(this.consensus.view().state, authority, epoch);
    return { authority, epoch };
  }

  /** Confirms the epoch linearizably and records the write; throws StaleEpochError if it moved. */
  async finalise(write: AdmittedWrite, operation: string): Promise<FeedEntry> {
    const { state } = await this.consensus.read();
    // Synchronous from the checks to the append (which assigns the serial): no apply can slip in.
    this.check(state, write.authority, write.epoch);
    this.check(this.consensus.view().state, write.authority, write.epoch);
    return this.feed.append({ authority: write.authority, operation, epoch: write.epoch });
  }

  async write(authority: string, epoch: number, operation: string): Promise<FeedEntry> {
    return this.finalise(this.admit(authority, epoch), operation);
  }

  private check(state: OwnershipState, authority: string, epoch: number): void {
    const ownership = state.authorities.get(authority);
    if (!ownership || ownership.home !== this.datacenter) {
      throw new NotHomeError(authority, this.datacenter, ownership?.home, ownership ? this.publicUrlsOf(ownership.home) : []);
    }
    if (ownership.epoch !== epoch) throw new StaleEpochError(authority, epoch, ownership.epoch);
    const intent = state.transfers.get(authority);
    if (intent?.frozen) throw new AuthorityFrozenError(authority, intent.id, intent.target);
    this.catchUp.assertHolds(authority, ownership);
  }
}
