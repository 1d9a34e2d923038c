import test from 'ava';
import { ChangeFeed } from '@baton/authority-transfer/internal/change-feed.js';
import { MemoryFiles } from '@baton/kernel/internal/byte-files.js';
import { FeedUnavailableError } from '@baton/authority-transfer/internal/transfer-errors.js';

let minted = 0;
const mint = () => `inc-${++minted}`;

async function openFeed(files = new MemoryFiles(), options: { peers?: string[]; maxRetained?: number; segmentEntries?: number } = {}) {
  const feed = new ChangeFeed('east-1', { files, mintIncarnation: mint, ...options });
  await feed.open();
  return feed;
}

const write = (operation: string) => ({ authority: 'a', operation, epoch: 1 });

test('the serial counts durably accepted writes, with no gaps', async (t) => {
  const feed = await openFeed();
  t.is(feed.serial(), 0);
  t.is((await feed.append(write('x'))).serial, 1);
  t.is((await feed.append(write('y'))).serial, 2);
  t.is(feed.serial(), 2);
  t.deepEqual(feed.read(1).entries.map((e) => e.operation), ['y']);
});

test('writes accepted together are numbered in order and made durable together', async (t) => {
  const feed = await openFeed();
  const entries = await Promise.all([feed.append(write('a')), feed.append(write('b')), feed.append(write('c'))]);
  t.deepEqual(entries.map((e) => e.serial), [1, 2, 3]);
  t.is(feed.serial(), 3);
});

test('a write is not visible to readers nor counted in the serial before it is durable', async (t) => {
  const feed = await openFeed();
  const pending = feed.append(write('x'));
  t.is(feed.serial(), 0, 'the barrier never counts a write that could still be lost');
  t.deepEqual(feed.read(0).entries, []);
  await pending;
  t.is(feed.serial(), 1);
});

test('a reopened feed keeps its serial and incarnation: serials never go back across a restart', async (t) => {
  const files = new MemoryFiles();
  const first = await openFeed(files);
  for (let i = 0; i < 3; i++) await first.append(write(`op${i}`));
  const incarnation = first.incarnation;
  const second = await openFeed(files);
  t.is(second.incarnation, incarnation);
  t.is(second.serial(), 3);
  t.is((await second.append(write('after'))).serial, 4);
  t.deepEqual(second.read(0).entries.map((e) => e.operation), ['op0', 'op1', 'op2', 'after']);
});

test('a feed that lost its storage comes back under a new incarnation', async (t) => {
  const first = await openFeed();
  await first.append(write('x'));
  const fresh = await openFeed();
  t.not(fresh.incarnation, first.incarnation);
  t.is(fresh.serial(), 0);
});

test('entries every peer pulled are trimmed; reading before them says truncated instead of skipping', async (t) => {
  const feed = await openFeed(new MemoryFiles(), { peers: ['west-1', 'north-1'], segmentEntries: 2 });
  for (let i = 0; i < 7; i++) await feed.append(write(`op${i}`));
  feed.notePeerProgress('west-1', feed.incarnation, 5);
  await new Promise((resolve) => setImmediate(resolve));
  t.false(feed.read(0).truncated, 'north-1 has pulled nothing yet: everything is kept');
  feed.notePeerProgress('north-1', feed.incarnation, 4);
  for (let i = 0; i < 5 && !feed.read(0).truncated; i++) await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(feed.read(0), { entries: [], truncated: true });
  t.deepEqual(feed.read(4, 10).entries.map((e) => e.serial), [5, 6, 7]);
  t.is(feed.serial(), 7);
});

test('progress under another incarnation or from a stranger does not trim', async (t) => {
  const feed = await openFeed(new MemoryFiles(), { peers: ['west-1'], segmentEntries: 1 });
  for (let i = 0; i < 4; i++) await feed.append(write(`op${i}`));
  feed.notePeerProgress('west-1', 'some-old-incarnation', 4);
  feed.notePeerProgress('mallory', feed.incarnation, 4);
  await new Promise((resolve) => setImmediate(resolve));
  t.false(feed.read(0).truncated);
});

test('a peer that stopped pulling holds back trimming only up to maxRetained entries', async (t) => {
  const feed = await openFeed(new MemoryFiles(), { peers: ['west-1'], maxRetained: 3, segmentEntries: 1 });
  for (let i = 0; i < 10; i++) await feed.append(write(`op${i}`));
  feed.notePeerProgress('west-1', feed.incarnation, 1);
  for (let i = 0; i < 20 && !feed.read(6).truncated; i++) await new Promise((resolve) => setImmediate(resolve));
  t.true(feed.read(6).truncated);
  t.deepEqual(feed.read(7).entries.map((e) => e.serial), [8, 9, 10]);
});

test('a storage failure rejects the write and every later one: serials stay gap-free', async (t) => {
  const files = new MemoryFiles();
  const feed = await openFeed(files);
  await feed.append(write('ok'));
  files.sync = async () => {
    throw new Error('EIO');
  };
  await t.throwsAsync(feed.append(write('lost')), { instanceOf: FeedUnavailableError, message: /EIO/ });
  await t.throwsAsync(feed.append(write('later')), { instanceOf: FeedUnavailableError });
  t.is(feed.serial(), 1);
});
