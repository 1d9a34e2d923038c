import type { OwnershipConsensus } from './audit-projection.js';
import type { ChangeFeed, FeedEntry } from './change-feed.js';
import { NotHomeError, StaleEpochError } from './transfer-errors.js';

/** A write admitted under an epoch, not yet finalised. */
export interface AdmittedWrite {
  authority: string;
  epoch: number;
}

/**
 * The fence: writes to an authority are accepted only at its home datacenter under its current
 * epoch. A write is admitted against the local view, then finalised only after a linearizable
 * read confirms the epoch still stands; a transfer that committed in between makes it stale, so
 * a former home never finalises a write against an authority it no longer owns. Finalising
 * appends to this member's change feed, which is what the barrier of a later transfer counts.
 */
export class WriteFence {
  constructor(
    private readonly consensus: OwnershipConsensus,
    private readonly feed: ChangeFeed,
    /** The datacenter this member serves. */
    private readonly datacenter: string,
  ) {}

  /** Checks the write against the local view; throws NotHomeError or StaleEpochError. */
  admit(authority: string, epoch: number): AdmittedWrite {
    this.check(this.consensus.view().state, authority, epoch);
    return { authority, epoch };
  }

  /** Confirms the epoch linearizably and records the write; throws StaleEpochError if it moved. */
  async finalise(write: AdmittedWrite, operation: string): Promise<FeedEntry> {
    const { state } = await this.consensus.read();
    // Synchronous from the check to the append: no apply can slip in between.
    this.check(state, write.authority, write.epoch);
    return this.feed.append({ authority: write.authority, operation, epoch: write.epoch });
  }

  async write(authority: string, epoch: number, operation: string): Promise<FeedEntry> {
    return this.finalise(this.admit(authority, epoch), operation);
  }

  private check(state: ReturnType<OwnershipConsensus['view']>['state'], authority: string, epoch: number): void {
    const ownership = state.authorities[authority];
    if (!ownership || ownership.home !== this.datacenter) {
      throw new NotHomeError(authority, this.datacenter, ownership?.home);
    }
    if (ownership.epoch !== epoch) throw new StaleEpochError(authority, epoch, ownership.epoch);
  }
}

