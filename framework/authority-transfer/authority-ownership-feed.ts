import type { Context } from 'koa';
import { problems, SubjectWatchers, type EventStreams } from '@baton/http';
import type { OwnershipConsensus } from './audit-projection.js';
import type { OwnershipState } from './ownership.js';
import { authorityOf } from './transfer-requests.js';

/** The event a watcher of an authority receives, at once and on every change. */
export interface AuthorityOwnershipEvent {
  authority: string;
  home: string;
  epoch: number;
  /** The public addresses of the home's members, as the roster lists them: where writes go. */
  home_urls: string[];
  /** A planned transfer's target datacenter while one is registered; null otherwise. */
  pending_target: string | null;
  /** Writes are refused (503) until the pending transfer commits or is called off. */
  frozen: boolean;
}

export const AUTHORITY_OWNERSHIP_EVENT = 'ownership';

/**
 * Tells writers where an authority's home is before a write is refused there: at once, then on
 * every change of home or epoch (a planned transfer's commit, a failover, any raw move) and of
 * a planned transfer's registration and freeze. Fed by the ownership consensus' applied
 * entries, each of which names the one authority it concerns.
 */
export class AuthorityOwnershipFeed {
  private readonly watchers: SubjectWatchers<AuthorityOwnershipEvent>;
  private lastSeen?: number;

  constructor(
    private readonly consensus: OwnershipConsensus,
    private readonly publicUrlsOf: (datacenter: string) => string[],
    streams: EventStreams,
  ) {
    this.watchers = new SubjectWatchers(streams, {
      event: AUTHORITY_OWNERSHIP_EVENT,
      eventOf: (authority) => this.eventOf(this.consensus.view().state, authority),
      subscribe: (changed) => {
        this.lastSeen = consensus.view().applied.index;
        return consensus.watch((_view, entry) => {
          const contiguous = this.lastSeen !== undefined && entry.position.index === this.lastSeen + 1;
          this.lastSeen = entry.position.index;
          const authority = authorityOf(entry.command);
          // An entry after a gap (a snapshot installed) may follow changes to any authority.
          if (!contiguous) changed('all');
          else if (authority !== undefined) changed([authority]);
        });
      },
    });
  }

  /** The authority's ownership once this member has caught up with the leader's commit (404 without a home). */
  async current(authority: string): Promise<AuthorityOwnershipEvent> {
    const { state } = await this.consensus.read();
    const event = this.eventOf(state, authority);
    if (!event) throw problems.notFound(`${authority} has no home`, { authority });
    return event;
  }

  /** Answers `ctx` with the authority's feed, once this member has caught up with the leader's commit. */
  async watch(ctx: Context, authority: string): Promise<void> {
    await this.current(authority);
    this.watchers.watch(ctx, authority);
  }

  private eventOf(state: OwnershipState, authority: string): AuthorityOwnershipEvent | undefined {
    const ownership = state.authorities.get(authority);
    if (!ownership) return undefined;
    const intent = state.transfers.get(authority);
    return {
      authority,
      home: ownership.home,
      epoch: ownership.epoch,
      home_urls: this.publicUrlsOf(ownership.home),
      pending_target: intent?.target ?? null,
      frozen: intent?.frozen ?? false,
    };
  }
}
