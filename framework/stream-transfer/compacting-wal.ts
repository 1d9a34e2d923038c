import type { StreamWal, WalEntry } from './wal.js';

/**
 * Keeps a node's WAL from growing without bound. Once enough has been appended since the last
 * compaction, it waits for the appends in flight, holds new ones back, and rewrites the log as
 * just what is still live (open sessions with their unflushed records, closes the metadata has
 * not recorded yet), read from `live` at that quiet moment.
 */
export class CompactingWal implements StreamWal {
  private appendedBytes = 0;
  private inFlight = 0;
  private idle?: () => void;
  private compacting?: Promise<void>;

  constructor(
    private readonly inner: StreamWal,
    private readonly live: () => WalEntry[],
    private readonly thresholdBytes: number,
  ) {}

  async append(entries: readonly WalEntry[]): Promise<void> {
    while (this.compacting) await this.compacting;
    this.inFlight += 1;
    try {
      await this.inner.append(entries);
      for (const entry of entries)
        this.appendedBytes +=
          entry.t === 'records' ? 64 + entry.bodies.reduce((n, b) => n + b.length, 0) : 64;
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.idle?.();
    }
    if (this.appendedBytes >= this.thresholdBytes && !this.compacting) {
      // Only later appends wait on this, so a failure must not escape as an unhandled rejection
      // (it would end the process). A failed rewrite left the log whole; appends go on, and the
      // next one past the threshold tries again.
      this.compacting = this.compact()
        .catch(() => undefined)
        .finally(() => (this.compacting = undefined));
    }
  }

  replay(): Promise<WalEntry[]> {
    return this.inner.replay();
  }

  rewrite(entries: readonly WalEntry[]): Promise<void> {
    this.appendedBytes = 0;
    return this.inner.rewrite(entries);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Bytes appended since the last compaction (an estimate: what the entries carry). */
  get pendingBytes(): number {
    return this.appendedBytes;
  }

  private async compact(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    this.idle = undefined;
    await this.inner.rewrite(this.live());
    this.appendedBytes = 0;
  }
}
