import type { MemberId } from '../contracts/peer-transport.js';

/** One metadata write this member accepted, at its place in the member's own feed. */
export interface FeedEntry {
  serial: number;
  authority: string;
  operation: string;
  epoch: number;
}

/**
 * A member's local, totally ordered change feed: the metadata writes it accepted, numbered by
 * its metadata serial (1, 2, 3... with no gaps), plus how far it has applied each peer's feed.
 * The serial is what a planned transfer takes as its barrier; a peer's applied serial for this
 * member's feed is what the barrier probe reads.
 */
export class ChangeFeed {
  private readonly entries: FeedEntry[] = [];
  /** Serial of the first retained entry minus one: entries up to it were trimmed. */
  private trimmed = 0;
  private readonly appliedFrom = new Map<MemberId, number>();

  constructor(readonly self: MemberId) {}

  /** This member's current metadata serial: the number of writes it has accepted. */
  serial(): number {
    return this.trimmed + this.entries.length;
  }

  append(write: Omit<FeedEntry, 'serial'>): FeedEntry {
    const entry = { ...write, serial: this.serial() + 1 };
    this.entries.push(entry);
    return entry;
  }

  /** Entries after `serial`, at most `limit`; `truncated` when older entries are gone. */
  read(after: number, limit = 1000): { entries: FeedEntry[]; truncated: boolean } {
    if (after < this.trimmed) return { entries: [], truncated: true };
    const start = after - this.trimmed;
    return { entries: this.entries.slice(start, start + Math.max(0, limit)), truncated: false };
  }

  /** Drops entries every peer has applied, so the feed holds only what someone still needs. */
  trimThrough(serial: number): void {
    const drop = Math.min(serial, this.serial()) - this.trimmed;
    if (drop <= 0) return;
    this.entries.splice(0, drop);
    this.trimmed += drop;
  }

  /** How far this member has applied `origin`'s feed (0 when never). */
  appliedSerial(origin: MemberId): number {
    return origin === this.self ? this.serial() : (this.appliedFrom.get(origin) ?? 0);
  }

  /**
   * Records that entries of `origin`'s feed through `serial` are applied here. Monotonic: a
   * duplicated or reordered pull never moves it back.
   */
  markApplied(origin: MemberId, serial: number): void {
    if (serial > (this.appliedFrom.get(origin) ?? 0)) this.appliedFrom.set(origin, serial);
  }
}
