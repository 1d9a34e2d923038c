import type { Clock, MemberId } from '@baton/contracts';
import type { ChangeFeed } from './change-feed.js';
import { fetchPeerJson } from './peer-fetch.js';
import type { Roster } from './roster.js';

/** A member's own feed position: the writes it acknowledged, in the incarnation they count in. */
export interface FeedPosition {
  member: MemberId;
  incarnation: string;
  serial: number;
}

/**
 * Reads the acknowledged serial of every member of a source datacenter: the barrier of a planned
 * transfer is taken from the writes the source acknowledged, whichever member took the request.
 * Rejects (naming the member) when one cannot answer: a barrier is never guessed.
 */
export interface SourcePositions {
  read(datacenter: string, options: { signal?: AbortSignal; timeoutMs: number }): Promise<FeedPosition[]>;
}

export class SourcePositionError extends Error {
  constructor(readonly member: MemberId, detail: string) {
    super(detail);
  }
}

/** This member's own feed, for a member alone in its datacenter (tests, single-member setups). */
export class OwnFeedPosition implements SourcePositions {
  constructor(private readonly feed: ChangeFeed) {}

  async read(): Promise<FeedPosition[]> {
    return [{ member: this.feed.self, incarnation: this.feed.incarnation, serial: this.feed.serial() }];
  }
}

/**
 * Over the roster: this member's own feed when it belongs to the source datacenter, and
 * GET {public}/availability/v1/feeds/{member}/applied (a member's answer about itself is its own
 * serial) for the others, in parallel.
 */
export class RosterSourcePositions implements SourcePositions {
  constructor(
    private readonly roster: Roster,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
    private readonly options: { token?: string; headers?: Record<string, string> } = {},
  ) {}

  async read(datacenter: string, options: { signal?: AbortSignal; timeoutMs: number }): Promise<FeedPosition[]> {
    const members = this.roster.membersOf(datacenter);
    return Promise.all(
      members.map(async (member): Promise<FeedPosition> => {
        if (member.id === this.feed.self) return { member: member.id, incarnation: this.feed.incarnation, serial: this.feed.serial() };
        let body: { serial?: unknown; incarnation?: unknown };
        try {
          body = (await fetchPeerJson(`${member.publicUrl}/availability/v1/feeds/${encodeURIComponent(member.id)}/applied`, {
            clock: this.clock,
            timeoutMs: options.timeoutMs,
            signal: options.signal,
            token: this.options.token,
            headers: this.options.headers,
          })) as typeof body;
        } catch (error) {
          throw new SourcePositionError(member.id, (error as Error).message);
        }
        if (!Number.isSafeInteger(body?.serial) || (body.serial as number) < 0 || typeof body.incarnation !== 'string') {
          throw new SourcePositionError(member.id, 'it answered without a serial and incarnation');
        }
        return { member: member.id, incarnation: body.incarnation, serial: body.serial as number };
      }),
    );
  }
}
