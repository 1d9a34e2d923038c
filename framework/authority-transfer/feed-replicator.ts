import type { Clock, Timer, Logger } from '@baton/contracts';
import type { FeedEntry } from './change-feed.js';
import type { FeedReplicas } from './feed-replicas.js';
import type { MemberTracker } from './member-tracker.js';
import { fetchPeerJson } from './peer-fetch.js';
import type { Roster } from './roster.js';
import type { ClockSkew } from './clock-skew.js';

export interface FeedReplicatorOptions {
  intervalMs: number;
  timeoutMs: number;
  batch: number;
  token?: string;
  /** This member's peer credential headers. */
  headers?: Record<string, string>;
  /** Told each peer's clock, as its feed page carries it. */
  clocks?: Pick<ClockSkew, 'note'>;
}

export const DEFAULT_FEED_REPLICATOR_OPTIONS: FeedReplicatorOptions = { intervalMs: 500, timeoutMs: 2_000, batch: 1_000 };

/** What a peer's GET /availability/v1/feed answers. */
interface FeedPage {
  /** The peer's clock when it answered (ms since the epoch). */
  clock?: unknown;
  incarnation?: unknown;
  entries?: unknown;
  truncated?: unknown;
}

/**
 * Pulls every peer's change feed from its public server (GET /availability/v1/feed?after=N) and
 * applies it to this member's replicas: written to disk first, then the applied serial a barrier
 * probe reads moves. A peer answering under another incarnation than the replica holds lost its
 * feed: the replica starts over at 0 in the new one. Each successful pull is also a sign of life
 * for the member tracker. Pulls are sequential per round, so a slow peer delays the round, never
 * overlaps it.
 */
export class FeedReplicator {
  private timer: Timer | undefined;
  private running = false;
  private again = false;
  private stopped = false;
  private readonly warnedTruncated = new Set<string>();

  constructor(
    private readonly self: string,
    private readonly replicas: FeedReplicas,
    private readonly roster: Roster,
    private readonly tracker: MemberTracker,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: FeedReplicatorOptions = DEFAULT_FEED_REPLICATOR_OPTIONS,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /**
   * Pulls now rather than at the next round (a frozen transfer to this datacenter waits on it).
   * A round already running is followed by another one at once.
   */
  pullSoon(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.schedule(0);
  }

  /** One round over every peer; resolves when it is done. */
  async pullOnce(): Promise<void> {
    for (const member of this.roster.allMembers()) {
      if (member.id === this.self || this.stopped) continue;
      try {
        await this.pull(member.id, member.publicUrl);
      } catch (error) {
        this.log.debug({ peer: member.id, err: (error as Error).message }, 'feed pull failed');
      }
    }
  }

  private async pull(peer: string, publicUrl: string): Promise<void> {
    const { incarnation, serial } = this.replicas.applied(peer);
    const query = `from=${encodeURIComponent(this.self)}&after=${serial}&limit=${this.options.batch}${incarnation ? `&incarnation=${encodeURIComponent(incarnation)}` : ''}`;
    const sentAt = this.clock.now();
    const page = (await fetchPeerJson(`${publicUrl}/availability/v1/feed?${query}`, {
      clock: this.clock,
      timeoutMs: this.options.timeoutMs,
      token: this.options.token,
      headers: this.options.headers,
    })) as FeedPage;
    this.options.clocks?.note(peer, sentAt, this.clock.now(), page?.clock);
    this.tracker.heard(peer);
    if (typeof page?.incarnation !== 'string' || page.incarnation === '') throw new Error(`${peer} answered a feed page without an incarnation`);
    const entries = Array.isArray(page.entries) ? (page.entries as FeedEntry[]) : [];
    if (page.incarnation !== incarnation) {
      this.log.info({ peer, from: incarnation ?? null, to: page.incarnation }, 'peer feed has a new incarnation; replicating it from the start');
      await this.replicas.reset(peer, page.incarnation);
      // Entries after a serial of another history mean nothing here; from 0 they are the start.
      if (serial !== 0) return;
    }
    if (page.truncated === true) {
      if (!this.warnedTruncated.has(peer)) {
        this.warnedTruncated.add(peer);
        this.log.warn({ peer, applied: serial }, 'peer trimmed its feed past what this member applied: transfers to this datacenter cannot catch up on it');
      }
      return;
    }
    this.warnedTruncated.delete(peer);
    if (entries.length > 0) await this.replicas.apply(peer, page.incarnation, entries);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(delay, () => {
      if (this.running) return;
      this.running = true;
      void this.pullOnce().finally(() => {
        this.running = false;
        const again = this.again;
        this.again = false;
        this.schedule(again ? 0 : this.options.intervalMs);
      });
    });
  }
}
