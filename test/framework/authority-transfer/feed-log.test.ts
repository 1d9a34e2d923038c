import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { CorruptRecordError } from '@baton/contracts';
import { FeedCorruptError, FeedLog } from '@baton/authority-transfer/internal/feed-log.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const entry = (serial: number) => ({ serial, authority: 'a', operation: `op${serial}`, epoch: 1 });

async function tempDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await makeTempDir('feed-log');
  t.teardown(() => dir.remove());
  return dir.path;
}

async function openLog(dir: string, segmentEntries = 3): Promise<FeedLog> {
  const log = new FeedLog(new DirectoryFiles(dir), { segmentEntries });
  await log.open(() => 'inc-a');
  return log;
}

test('entries and the incarnation survive a reopen on disk, across segments', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir);
  await log.append([1, 2, 3, 4, 5].map(entry));
  await log.close();
  t.is((await readdir(dir)).filter((n) => n.endsWith('.log')).length, 2, 'rolled into a second segment');
  const again = await openLog(dir);
  t.is(again.incarnation, 'inc-a');
  t.is(again.last, 5);
  t.deepEqual(again.read(0, 10).map((e) => e.serial), [1, 2, 3, 4, 5]);
  await again.close();
});

test('a torn tail (a crash mid-append) is cut at start, and appends continue after the last whole entry', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, 100);
  await log.append([1, 2].map(entry));
  await log.close();
  const [segment] = (await readdir(dir)).filter((n) => n.endsWith('.log'));
  await appendFile(join(dir, segment), '1234abcd {"serial":3,"auth');
  const again = await openLog(dir, 100);
  t.is(again.last, 2);
  await again.append([entry(3)]);
  await again.close();
  const reopened = await openLog(dir, 100);
  t.deepEqual(reopened.read(0, 10).map((e) => e.operation), ['op1', 'op2', 'op3']);
  await reopened.close();
});

test('damage before the newest segment refuses to start rather than lose acknowledged writes', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, 2);
  await log.append([1, 2, 3].map(entry));
  await log.close();
  const [oldest] = (await readdir(dir)).filter((n) => n.endsWith('.log')).sort();
  const bytes = await readFile(join(dir, oldest), 'utf8');
  await writeFile(join(dir, oldest), bytes.replace('op1', 'opX'));
  const error = await t.throwsAsync(openLog(dir, 2), { instanceOf: CorruptRecordError });
  t.is(error!.store, 'change-feed');
  t.is(error!.offset, 0, 'the first record of the segment is the damaged one');
  t.regex(error!.message, /checksum does not match/);
});

test('a damaged record in the newest segment with intact ones after it is refused, never cut: those were acknowledged', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, 100);
  await log.append([1, 2, 3].map(entry));
  await log.close();
  const [segment] = (await readdir(dir)).filter((n) => n.endsWith('.log'));
  const bytes = await readFile(join(dir, segment), 'utf8');
  await writeFile(join(dir, segment), bytes.replace('op2', 'opX'));
  const error = await t.throwsAsync(openLog(dir, 100), { instanceOf: CorruptRecordError });
  t.is(error!.store, 'change-feed');
  t.regex(error!.message, /1 intact entry follows it/);
  // Nothing was cut: the file still holds all three records.
  t.is((await readFile(join(dir, segment), 'utf8')).split('\n').filter(Boolean).length, 3);
});

test('segments without the incarnation file are refused', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir);
  await log.append([entry(1)]);
  await log.close();
  const { rm } = await import('node:fs/promises');
  await rm(join(dir, 'feed.meta'));
  await t.throwsAsync(openLog(dir), { instanceOf: FeedCorruptError, message: /without feed\.meta/ });
});

test('trimming drops whole old segments, never the newest, so the last serial survives a reopen', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, 2);
  await log.append([1, 2, 3, 4, 5].map(entry));
  await log.trimThrough(5);
  t.is(log.trimmed, 4, 'the newest segment (entry 5) stays');
  await log.close();
  const again = await openLog(dir, 2);
  t.is(again.last, 5);
  t.is(again.trimmed, 4);
  t.deepEqual(again.read(4, 10).map((e) => e.serial), [5]);
  await again.append([entry(6)]);
  t.is(again.last, 6);
  await again.close();
});

test('an append that does not continue the feed is refused', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir);
  await log.append([entry(1)]);
  await t.throwsAsync(log.append([entry(3)]), { instanceOf: RangeError, message: /does not follow 1/ });
  await log.close();
});

test('a reset starts a new history at 0 under the new incarnation', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, 2);
  await log.append([1, 2, 3].map(entry));
  await log.reset('inc-b');
  t.is(log.last, 0);
  await log.append([entry(1)]);
  await log.close();
  const again = await openLog(dir, 2);
  t.is(again.incarnation, 'inc-b');
  t.is(again.last, 1);
  await again.close();
});
