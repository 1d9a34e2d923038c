import test from 'ava';
import type { WriteInput, WriteOutput } from './authority/authority-workload.js';
import { checkFeedsKeptAcknowledged, type FeedReading } from './durable/feed-durability.js';
import { OperationLog } from './operation-log.js';

function acknowledged(log: OperationLog, operation: string, serial: number, epoch = 1): void {
  log
    .invoke<WriteInput, WriteOutput>('w0', 'write', {
      authority: 'a0',
      operation,
      epoch,
      member: 'east-1',
    })
    .ok({ epoch, serial });
}

const entry = (serial: number, operation: string, epoch = 1) => ({
  serial,
  authority: 'a0',
  operation,
  epoch,
});
const started = new Map([['east-1', 'inc-1']]);
const feed = (reading: Partial<FeedReading>) =>
  new Map([['east-1', { incarnation: 'inc-1', serial: 3, entries: [], ...reading }]]);

function history(): OperationLog {
  const log = new OperationLog();
  acknowledged(log, 'w0-0', 1);
  acknowledged(log, 'w0-1', 2);
  acknowledged(log, 'w0-2', 3);
  // Refused and unknown writes promise nothing.
  log
    .invoke<WriteInput, WriteOutput>('w0', 'write', {
      authority: 'a0',
      operation: 'w0-3',
      epoch: 1,
      member: 'east-1',
    })
    .unknown('no answer in time');
  return log;
}

test('a feed holding every acknowledged write, or having trimmed the oldest, passes', (t) => {
  t.deepEqual(
    checkFeedsKeptAcknowledged(
      history(),
      started,
      feed({ entries: [entry(1, 'w0-0'), entry(2, 'w0-1'), entry(3, 'w0-2')] }),
    ),
    [],
  );
  t.deepEqual(
    checkFeedsKeptAcknowledged(history(), started, feed({ entries: [entry(3, 'w0-2')] })),
    [],
  );
  t.deepEqual(checkFeedsKeptAcknowledged(history(), started, feed({ entries: [] })), []);
});

test('a feed that ends before an acknowledged serial lost the write', (t) => {
  const problems = checkFeedsKeptAcknowledged(
    history(),
    started,
    feed({ serial: 2, entries: [entry(1, 'w0-0'), entry(2, 'w0-1')] }),
  );
  t.is(problems.length, 1);
  t.regex(problems[0], /w0-2 was acknowledged with serial 3, but its feed ends at 2: lost/);
});

test('a kept serial missing, or holding another write, is reported', (t) => {
  const missing = checkFeedsKeptAcknowledged(
    history(),
    started,
    feed({ entries: [entry(1, 'w0-0'), entry(3, 'w0-2')] }),
  );
  t.deepEqual(missing.length, 1);
  t.regex(missing[0], /w0-1 \(serial 2\) is missing/);
  const changed = checkFeedsKeptAcknowledged(
    history(),
    started,
    feed({ entries: [entry(1, 'w0-0'), entry(2, 'w0-9'), entry(3, 'w0-2', 2)] }),
  );
  t.is(changed.length, 2);
  t.regex(changed[0], /serial 2 holds a0\/w0-9/);
  t.regex(changed[1], /serial 3 holds a0\/w0-2 at epoch 2/);
});

test('a feed that started over under a new incarnation is reported', (t) => {
  const problems = checkFeedsKeptAcknowledged(
    history(),
    started,
    feed({ incarnation: 'inc-2', entries: [entry(1, 'w0-0'), entry(2, 'w0-1'), entry(3, 'w0-2')] }),
  );
  t.is(problems.length, 1);
  t.regex(problems[0], /started over \(incarnation inc-1, now inc-2\)/);
});
