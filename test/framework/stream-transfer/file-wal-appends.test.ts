import test from 'ava';
import { FileWal } from '@baton/stream-transfer/internal/file-wal.js';
import type { WalEntry } from '@baton/stream-transfer/internal/wal.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const flushed = (upTo: number): WalEntry => ({ t: 'flushed', stream: 's', epoch: 1, upTo });

test('appends awaited one after another each complete, and replay returns them in order', async (t) => {
  const dir = await makeTempDir('file-wal-appends');
  t.teardown(() => dir.remove());
  const wal = await FileWal.open(dir.path);
  // The second append is queued while the first one's drain is finishing: it must start a drain of its own.
  for (let i = 1; i <= 20; i++) await wal.append([flushed(i)]);
  const concurrent = Array.from({ length: 10 }, (_, i) => wal.append([flushed(21 + i)]));
  await Promise.all(concurrent);
  await wal.append([flushed(31)]);
  t.deepEqual(
    (await wal.replay()).map((e) => (e as { upTo: number }).upTo),
    Array.from({ length: 31 }, (_, i) => i + 1),
  );
  await wal.close();
});
