import type { MemberId } from '@baton/contracts';
import type { FeedEntry, FeedOrigin } from './change-feed.js';
import { MemoryFiles, type ByteFiles } from '@baton/kernel';
import { FeedLog } from './feed-log.js';

/** How far this member has applied one peer's feed, in which incarnation of it. */
export interface AppliedPosition {
  /** Undefined until the first pull from that peer. */
  incarnation: string | undefined;
  serial: number;
  /**
   * Names the replica's files (see FeedLog.storage): it changes when they are wiped (a disk loss)
   * or reset, so a reader can tell a serial that went backwards from one out of order.
   */
  storage: string | undefined;
}

export interface FeedReplicasOptions {
  /** Storage of one origin's replica; in memory when absent. */
  filesFor?: (origin: MemberId) => ByteFiles;
  /** Entries of each replica kept on disk behind its applied serial (older segments are dropped). */
  retain?: number;
  segmentEntries?: number;
}

/**
 * The peers' feeds as applied here: for each origin, its entries written to this member's disk
 * (synced) before the applied serial moves, so the serial a barrier probe reads is what this
 * member truly holds, and it survives a restart. Positions count within the origin's
 * incarnation: when the origin comes back under a new one, the replica starts over at 0.
 */
export class FeedReplicas {
  private readonly logs = new Map<MemberId, FeedLog>();
  /** One apply or reset at a time per origin. */
  private readonly chains = new Map<MemberId, Promise<unknown>>();
  private readonly retain: number;
  private readonly listeners = new Set<(origin: MemberId) => void>();

  constructor(
    readonly self: MemberId,
    private readonly options: FeedReplicasOptions = {},
  ) {
    this.retain = options.retain ?? 10_000;
  }

  /** Recovers the replicas of `origins` (the roster's other members). */
  async open(origins: readonly MemberId[]): Promise<void> {
    for (const origin of origins) {
      if (origin === this.self || this.logs.has(origin)) continue;
      const log = new FeedLog(this.options.filesFor?.(origin) ?? new MemoryFiles(), { segmentEntries: this.options.segmentEntries });
      await log.open();
      this.logs.set(origin, log);
    }
  }

  /** Where this member stands in `origin`'s feed: {undefined, 0} when it never pulled it. */
  applied(origin: MemberId): AppliedPosition {
    const log = this.logs.get(origin);
    return { incarnation: log?.incarnation, serial: log?.last ?? 0, storage: log?.storage };
  }

  /** The applied serial of `origin` under `incarnation`: 0 when this member holds another history. */
  appliedSerial(origin: FeedOrigin): number {
    const position = this.applied(origin.member);
    return position.incarnation === origin.incarnation ? position.serial : 0;
  }

  /** Retained entries of `origin`'s feed after `after`, at most `limit` (a failover's loss report reads them). */
  entries(origin: MemberId, after: number, limit: number): FeedEntry[] {
    return this.logs.get(origin)?.read(after, limit) ?? [];
  }

  /**
   * Writes `entries` of `origin`'s feed (incarnation `incarnation`) durably, then the applied
   * serial moves past them. Only the contiguous run after the current serial is taken; a
   * duplicate or a gap stops it. Returns the applied serial.
   */
  apply(origin: MemberId, incarnation: string, entries: readonly FeedEntry[]): Promise<number> {
    return this.serialise(origin, async () => {
      const log = this.log(origin);
      if (log.incarnation !== incarnation) throw new Error(`replica of ${origin} holds incarnation ${log.incarnation ?? 'none'}, not ${incarnation}: reset it first`);
      const run: FeedEntry[] = [];
      for (const entry of entries) {
        if (entry?.serial !== log.last + run.length + 1) break;
        run.push({ serial: entry.serial, authority: entry.authority, operation: entry.operation, epoch: entry.epoch });
      }
      try {
        await log.append(run);
      } catch (error) {
        // The file may hold part of the run: recover from disk, which keeps whatever was whole.
        await log.open().catch(() => undefined);
        this.announce(origin);
        throw error;
      }
      if (run.length > 0) this.announce(origin);
      await log.trimThrough(log.last - this.retain);
      return log.last;
    });
  }

  /** `origin` came back under a new incarnation: forget its old history and start at 0. */
  reset(origin: MemberId, incarnation: string): Promise<void> {
    return this.serialise(origin, async () => {
      await this.log(origin).reset(incarnation);
      this.announce(origin);
    });
  }

  /**
   * `listener` hears the origin whose replica moved, right after the entries are on disk (before
   * older segments are trimmed) or after a reset; returns the unsubscribe. A waiting frontier
   * probe is answered from it (see AppliedWaits).
   */
  onApplied(listener: (origin: MemberId) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    await Promise.all([...this.chains.values()].map((c) => c.catch(() => undefined)));
    for (const log of this.logs.values()) await log.close();
  }

  private log(origin: MemberId): FeedLog {
    const log = this.logs.get(origin);
    if (!log) throw new Error(`no replica of ${origin}: it is not in the roster this member opened with`);
    return log;
  }

  private announce(origin: MemberId): void {
    for (const listener of this.listeners) listener(origin);
  }

  private serialise<T>(origin: MemberId, work: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(origin) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.chains.set(origin, next);
    return next;
  }
}
