import type { Logger, MemberId } from '@baton/contracts';
import { MemoryFiles, type ByteFiles } from '@baton/kernel';
import { FeedLog } from './feed-log.js';
import { FeedUnavailableError } from './transfer-errors.js';

/** One metadata write this member accepted, at its place in the member's own feed. */
export interface FeedEntry {
  serial: number;
  authority: string;
  operation: string;
  epoch: number;
}

/**
 * Which history of a member's feed a serial counts in. A feed that lost its storage starts a new
 * incarnation at serial 0, so a serial read under one incarnation never compares with another:
 * a peer's high reading from before cannot satisfy a barrier taken after.
 */
export interface FeedOrigin {
  member: MemberId;
  incarnation: string;
}

export interface ChangeFeedOptions {
  /** Where the feed lives; in memory when absent (gone with the process, new incarnation each start). */
  files?: ByteFiles;
  /** Names a new incarnation (random hex from the injected Rng). */
  mintIncarnation: () => string;
  /** The peers that pull this feed: entries every one of them applied are trimmed. */
  peers?: readonly MemberId[];
  /**
   * At most this many entries are kept for a peer that stopped pulling; past it they are trimmed
   * anyway (that peer then reads `truncated` and cannot catch up from this feed).
   */
  maxRetained?: number;
  segmentEntries?: number;
  log?: Logger;
}

/**
 * A member's local, totally ordered change feed: the metadata writes it accepted, numbered by
 * its metadata serial (1, 2, 3... with no gaps within an incarnation). The serial is what a
 * planned transfer takes as its barrier, so it counts only durable writes, and it never goes
 * back: the feed is on disk (appended and synced before a write is acknowledged, recovered at
 * start), and a feed that lost its disk comes back under a new incarnation.
 *
 * Appends are committed in groups: writes that arrive while one sync runs share the next one.
 * A serial is assigned when the write is accepted (synchronously, so the fence's check and the
 * append cannot be split), but readers see an entry only once it is durable.
 */
export class ChangeFeed {
  private readonly log: FeedLog;
  private readonly queue: { entry: FeedEntry; resolve(e: FeedEntry): void; reject(e: unknown): void }[] = [];
  private flushing: Promise<void> | undefined;
  private assigned = 0;
  private broken: unknown;
  private opened = false;
  private readonly progress = new Map<MemberId, number>();
  private trimming = false;
  private readonly maxRetained: number;

  constructor(
    readonly self: MemberId,
    private readonly options: ChangeFeedOptions,
  ) {
    this.log = new FeedLog(options.files ?? new MemoryFiles(), { segmentEntries: options.segmentEntries });
    this.maxRetained = options.maxRetained ?? 1_000_000;
  }

  /** Recovers the feed (or creates it under a new incarnation). Before anything else. */
  async open(): Promise<void> {
    await this.log.open(this.options.mintIncarnation);
    this.assigned = this.log.last;
    this.opened = true;
  }

  get incarnation(): string {
    this.assertOpen();
    return this.log.incarnation!;
  }

  origin(): FeedOrigin {
    return { member: this.self, incarnation: this.incarnation };
  }

  /** This member's current metadata serial: the writes it has durably accepted. */
  serial(): number {
    this.assertOpen();
    return this.log.last;
  }

  /**
   * The highest serial handed out, durable or not: every write this member acknowledged, and
   * every one it may still acknowledge, lies at or below it. What a frozen source records as its
   * final serial (a write not yet durable there is not acknowledged until it is).
   */
  assignedSerial(): number {
    this.assertOpen();
    return this.assigned;
  }

  /**
   * Assigns the write the next serial at once and resolves once it is durable. Rejects with
   * FeedUnavailableError when storage failed; the feed then refuses every later write too,
   * since serials already handed out can no longer be kept gap-free.
   */
  append(write: Omit<FeedEntry, 'serial'>): Promise<FeedEntry> {
    this.assertOpen();
    if (this.broken !== undefined) return Promise.reject(this.unavailable());
    const entry: FeedEntry = { serial: ++this.assigned, authority: write.authority, operation: write.operation, epoch: write.epoch };
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      if (!this.flushing) this.flushing = this.flush();
    });
  }

  /** Durable entries after `after`, at most `limit`; `truncated` when older entries are gone. */
  read(after: number, limit = 1000): { entries: FeedEntry[]; truncated: boolean } {
    this.assertOpen();
    if (after < this.log.trimmed) return { entries: [], truncated: true };
    return { entries: this.log.read(after, limit), truncated: false };
  }

  /**
   * A peer pulled after `serial` under `incarnation`: it holds everything through it. Entries
   * every peer holds are trimmed; a peer that never pulled keeps everything (up to maxRetained).
   */
  notePeerProgress(peer: MemberId, incarnation: string, serial: number): void {
    if (!this.opened || incarnation !== this.incarnation || !(this.options.peers ?? []).includes(peer)) return;
    if (serial > (this.progress.get(peer) ?? 0)) this.progress.set(peer, Math.min(serial, this.serial()));
    void this.trim();
  }

  /** Waits for queued writes, then closes the files. */
  async close(): Promise<void> {
    await this.flushing?.catch(() => undefined);
    await this.log.close();
  }

  private async trim(): Promise<void> {
    if (this.trimming || this.broken !== undefined) return;
    const peers = this.options.peers ?? [];
    let through = peers.length === 0 ? this.serial() : Math.min(...peers.map((p) => this.progress.get(p) ?? 0));
    const cap = this.serial() - this.maxRetained;
    if (through < cap) {
      this.options.log?.warn({ lagging: peers.filter((p) => (this.progress.get(p) ?? 0) < cap), cap }, 'feed trimmed past a lagging peer');
      through = cap;
    }
    if (through <= this.log.trimmed) return;
    this.trimming = true;
    try {
      // Trimming waits for queued appends so it never races a segment roll.
      await this.flushing;
      await this.log.trimThrough(through);
    } catch (error) {
      this.options.log?.warn({ err: (error as Error).message }, 'feed trim failed; will retry on the next pull');
    } finally {
      this.trimming = false;
    }
  }

  /**
   * Drains the queue in batches. `flushing` is cleared in the same synchronous step that finds
   * the queue empty, so an append made by a waiter's continuation always starts a new flush.
   */
  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        try {
          if (this.broken !== undefined) throw this.unavailable();
          await this.log.append(batch.map((b) => b.entry));
        } catch (error) {
          this.broken ??= error;
          const failure = error instanceof FeedUnavailableError ? error : this.unavailable();
          for (const waiter of [...batch, ...this.queue.splice(0)]) waiter.reject(failure);
          return;
        }
        for (const waiter of batch) waiter.resolve({ ...waiter.entry });
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private unavailable(): FeedUnavailableError {
    return new FeedUnavailableError((this.broken as Error)?.message ?? String(this.broken), { cause: this.broken });
  }

  private assertOpen(): void {
    if (!this.opened) throw new Error(`the change feed of ${this.self} is not open: call open() first`);
  }
}
