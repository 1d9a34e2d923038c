import type { MemberId } from '@baton/contracts';
import type { ChangeFeed } from './change-feed.js';
import type { FeedReplicas } from './feed-replicas.js';
import type { Ownership } from './ownership.js';
import type { CatchUpView } from './api-schemas.js';

export type { CatchUpView };

/** Reads an authority's catch-up requirement against this member's own feed and replicas. */
export class CatchUpViews {
  constructor(
    private readonly self: MemberId,
    private readonly feed: Pick<ChangeFeed, 'incarnation' | 'serial'>,
    private readonly replicas: Pick<FeedReplicas, 'appliedSerial'>,
    /** The members of a datacenter, as this member's roster lists them. */
    private readonly membersOf: (datacenter: string) => readonly MemberId[],
  ) {}

  /** O(source members + home members): one replica lookup per final, bounded lists. */
  of(ownership: Ownership): CatchUpView {
    const catchUp = ownership.catchUp;
    if (!catchUp || catchUp.done) return null;
    const waiting = this.membersOf(ownership.home).filter((member) => !catchUp.settled.includes(member));
    if (waiting.length === 0) return null;
    return {
      waiting_on: [...waiting],
      settled: [...catchUp.settled],
      finals: catchUp.finals.map((final) => ({
        source: final.member,
        incarnation: final.incarnation,
        final: final.serial,
        held: final.member === this.self ? (this.feed.incarnation === final.incarnation ? this.feed.serial() : 0) : this.replicas.appliedSerial(final),
      })),
      held_at: this.self,
    };
  }
}
