import test from 'ava';
import { CompactingWal } from '@baton/stream-transfer/internal/compacting-wal.js';
import type { StreamWal, WalEntry } from '@baton/stream-transfer/internal/wal.js';

/** A WAL in memory whose next `failRewrites` rewrites fail (a full disk, a dying process). */
class FlakyRewriteWal implements StreamWal {
  entries: WalEntry[] = [];
  rewrites = 0;
  constructor(public failRewrites: number) {}
  async append(entries: readonly WalEntry[]): Promise<void> {
    this.entries.push(...entries);
  }
  async replay(): Promise<WalEntry[]> {
    return [...this.entries];
  }
  async rewrite(entries: readonly WalEntry[]): Promise<void> {
    this.rewrites += 1;
    if (this.failRewrites > 0) {
      this.failRewrites -= 1;
      throw new Error('simulated rewrite failure');
    }
    this.entries = [...entries];
  }
  async close(): Promise<void> {}
}

const settled = (stream: string): WalEntry => ({ t: 'settled', stream, epoch: 1 });

// ava fails a file on any unhandled rejection, so this also checks the failure is contained.
test('a failed WAL compaction leaves appends working and is retried by the next append past the threshold', async (t) => {
  const inner = new FlakyRewriteWal(1);
  const live: WalEntry[] = [settled('live')];
  const wal = new CompactingWal(inner, () => live, 128);
  await wal.append([settled('a')]);
  await wal.append([settled('b')]); // 128 estimated bytes: the threshold, and the rewrite fails
  await wal.append([settled('c')]); // waits out the failed compaction, appends, compacts again
  t.is(inner.rewrites, 2, 'the append after the failure compacted again');
  await wal.append([settled('d')]);
  t.deepEqual(
    await wal.replay(),
    [settled('live'), settled('d')],
    'the log was compacted to what is live, then appended to',
  );
});
