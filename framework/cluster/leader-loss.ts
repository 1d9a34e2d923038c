import type { Clock, MetadataConsensus } from '@baton/contracts';
import { consensusFactsOf } from '@baton/http';

/**
 * Since when this member has known no leader: what a verdict the leader publishes (stream
 * liveness) is worth when read here. A member that knows no leader at start counts from then.
 */
export class LeaderLoss {
  private since: number | null;
  private readonly unsubscribe: () => void;

  constructor(consensus: MetadataConsensus<unknown, unknown, unknown>, clock: Clock) {
    this.since = consensusFactsOf(consensus).leader === null ? clock.now() : null;
    this.unsubscribe = consensus.onLeadership((leadership) => {
      const known = leadership.isLeader || (leadership.leader !== undefined && leadership.leader !== '');
      if (known) this.since = null;
      else this.since ??= clock.now();
    });
  }

  /** When this member last lost its leader (ms since the epoch, on its clock); null while it knows one. */
  get leaderlessSince(): number | null {
    return this.since;
  }

  stop(): void {
    this.unsubscribe();
  }
}
