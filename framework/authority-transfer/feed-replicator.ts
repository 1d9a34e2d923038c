import type { Clock, Timer } from '../contracts/clock.js';
import type { Logger } from '../contracts/logger.js';
import type { ChangeFeed, FeedEntry } from './change-feed.js';
import type { MemberTracker } from './member-tracker.js';
import { fetchPeerJson } from './peer-fetch.js';
import type { Roster } from './roster.js';

export interface FeedReplicatorOptions {
  intervalMs: number;
  timeoutMs: number;
  batch: number;
  token?: string;
}

export const DEFAULT_FEED_REPLICATOR_OPTIONS: FeedReplicatorOptions = { intervalMs: 500, timeoutMs: 2_000, batch: 1_000 };

/**
 * Pulls every peer's change feed from its public server (GET /availability/v1/feed?after=N) and
 * records how far it applied each one: the serial a barrier probe reads. Each successful pull is
 * also a sign of life for the member tracker. Pulls are sequential per round, so a slow peer
 * delays the round, never overlaps it.
 */
export class FeedReplicator {
  private timer: Timer | undefined;
  private running = false;
  private stopped = false;
  /** Received entries of each peer's feed, kept for reconciliation (last `batch` only). */
  private readonly recent = new Map<string, FeedEntry[]>();

  constructor(
    private readonly feed: ChangeFeed,
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

  /** One round over every peer; resolves when it is done. */
  async pullOnce(): Promise<void> {
    for (const member of this.roster.allMembers()) {
      if (member.id === this.feed.self || this.stopped) continue;
      try {
        const after = this.feed.appliedSerial(member.id);
        const body = (await fetchPeerJson(
          `${member.publicUrl}/availability/v1/feed?after=${after}&limit=${this.options.batch}`,
          { clock: this.clock, timeoutMs: this.options.timeoutMs, token: this.options.token },
        )) as { entries?: FeedEntry[] };
        this.tracker.heard(member.id);
        const entries = Array.isArray(body?.entries) ? body.entries : [];
        let next = after;
        for (const entry of entries) {
          if (entry?.serial !== next + 1) break; // a gap or a duplicate: stop at what is contiguous
          next = entry.serial;
        }
        if (next > after) {
          const kept = [...(this.recent.get(member.id) ?? []), ...entries.slice(0, next - after)];
          this.recent.set(member.id, kept.slice(-this.options.batch));
          this.feed.markApplied(member.id, next);
        }
      } catch (error) {
        this.log.debug({ peer: member.id, err: (error as Error).message }, 'feed pull failed');
      }
    }
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(delay, () => {
      if (this.running) return;
      this.running = true;
      void this.pullOnce().finally(() => {
        this.running = false;
        this.schedule(this.options.intervalMs);
      });
    });
  }
}
