import test from 'ava';
import { ChangeFeed } from '../../../framework/authority-transfer/change-feed.js';

test('the serial counts accepted writes, with no gaps', (t) => {
  const feed = new ChangeFeed('east-1');
  t.is(feed.serial(), 0);
  t.is(feed.append({ authority: 'a', operation: 'x', epoch: 1 }).serial, 1);
  t.is(feed.append({ authority: 'a', operation: 'y', epoch: 1 }).serial, 2);
  t.is(feed.serial(), 2);
  t.deepEqual(feed.read(1).entries.map((e) => e.operation), ['y']);
});

test('reading after trimmed entries says so instead of skipping them silently', (t) => {
  const feed = new ChangeFeed('east-1');
  for (let i = 0; i < 5; i++) feed.append({ authority: 'a', operation: `op${i}`, epoch: 1 });
  feed.trimThrough(3);
  t.is(feed.serial(), 5);
  t.deepEqual(feed.read(1), { entries: [], truncated: true });
  t.deepEqual(feed.read(3, 1).entries.map((e) => e.serial), [4]);
});

test('applied serials of peers only move forward; a member has applied its own feed', (t) => {
  const feed = new ChangeFeed('east-1');
  feed.markApplied('west-1', 7);
  feed.markApplied('west-1', 3);
  t.is(feed.appliedSerial('west-1'), 7);
  t.is(feed.appliedSerial('north-1'), 0);
  feed.append({ authority: 'a', operation: 'x', epoch: 1 });
  t.is(feed.appliedSerial('east-1'), 1);
});
