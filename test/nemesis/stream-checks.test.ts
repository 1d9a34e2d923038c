import test from 'ava';
import { OperationLog } from './operation-log.js';
import {
  checkFailovers,
  checkStreamHistory,
  checkTransferSamples,
  failoverTimes,
  type AppendInput,
  type AppendOutput,
  type StreamRead,
} from './stream/stream-checks.js';

/** A history of acknowledged batches on stream s0: [producer, seq, bodies count, epoch, node, first offset]. */
function history(
  batches: Array<[string, number, number, number, string, number, ('ok' | 'fail' | 'unknown')?]>,
): OperationLog {
  const log = new OperationLog();
  for (const [producer, seq, count, epoch, node, first, outcome = 'ok'] of batches) {
    const bodies = Array.from({ length: count }, (_, i) => `${producer}/s0/${seq}/${i}`);
    const pending = log.invoke<AppendInput, AppendOutput>(producer, 'append', {
      stream: 's0',
      producer,
      seq,
      bodies,
      node,
    });
    if (outcome === 'ok')
      pending.ok({ epoch, node, offsets: bodies.map((_, i) => first + i), duplicate: false });
    else if (outcome === 'fail') pending.fail('409 not-owner');
    else pending.unknown('no answer in time');
  }
  return log;
}

const read = (...bodies: string[]): Record<string, StreamRead> => ({
  s0: bodies.map((body, offset) => ({ offset, body })),
});

test('a history whose acknowledged records are all read back once, in order, passes', (t) => {
  const log = history([
    ['p0', 0, 2, 1, 'n1', 0],
    ['p1', 0, 1, 2, 'n2', 2],
    ['p0', 1, 1, 2, 'n2', 3, 'unknown'],
  ]);
  t.deepEqual(
    checkStreamHistory(log, read('p0/s0/0/0', 'p0/s0/0/1', 'p1/s0/0/0'), {
      s0: { owner: 'n2', epoch: 2 },
    }),
    [],
  );
});

test('a lost acknowledged record, a repeat, and a record of a refused batch are each reported', (t) => {
  const log = history([
    ['p0', 0, 1, 1, 'n1', 0],
    ['p0', 1, 1, 1, 'n1', 1],
    ['p1', 0, 1, 1, 'n1', 0, 'fail'],
  ]);
  const problems = checkStreamHistory(log, read('p0/s0/0/0', 'p0/s0/0/0', 'p1/s0/0/0'), undefined);
  t.true(problems.some((p) => p.includes('p0/s0/1/0') && p.includes('is not at its offset 1')));
  t.true(problems.some((p) => p.includes('appears twice')));
  t.true(problems.some((p) => p.includes('p1/s0/0/0') && p.includes('every attempt was refused')));
});

test('two nodes acknowledging one epoch, an epoch going back and batches out of order are reported', (t) => {
  const log = history([
    ['p0', 0, 1, 2, 'n1', 0],
    ['p1', 0, 1, 2, 'n2', 1],
    ['p0', 1, 1, 1, 'n3', 2],
  ]);
  const problems = checkStreamHistory(log, read('p0/s0/0/0', 'p1/s0/0/0', 'p0/s0/1/0'), {
    s0: { owner: 'n3', epoch: 1 },
  });
  t.true(problems.some((p) => p.includes('epoch 2 acknowledged by both n1 and n2')));
  t.true(
    problems.some((p) =>
      p.includes('old owner n3 acknowledged batch p0/1 at epoch 1, invoked after new owner n1'),
    ),
  );
  t.true(problems.some((p) => p.includes('epochs do not increase along the stream')));
  t.true(problems.some((p) => p.includes('below the acknowledged epoch 2')));
  const swapped = checkStreamHistory(
    history([
      ['p0', 0, 1, 1, 'n1', 1, 'unknown'],
      ['p0', 1, 1, 1, 'n1', 0, 'unknown'],
    ]),
    read('p0/s0/1/0', 'p0/s0/0/0'),
    undefined,
  );
  t.true(swapped.some((p) => p.includes("producer p0's batch 0 comes after its batch 1")));
});

test('an old epoch acknowledged above a newer one is reported even when the two overlapped in time', (t) => {
  // Both in flight at once (no real-time order between them), yet epoch 1 sits above epoch 2.
  const log = new OperationLog();
  const a = log.invoke<AppendInput, AppendOutput>('p0', 'append', {
    stream: 's0',
    producer: 'p0',
    seq: 0,
    bodies: ['p0/s0/0/0'],
    node: 'n1',
  });
  const b = log.invoke<AppendInput, AppendOutput>('p1', 'append', {
    stream: 's0',
    producer: 'p1',
    seq: 0,
    bodies: ['p1/s0/0/0'],
    node: 'n2',
  });
  b.ok({ epoch: 2, node: 'n2', offsets: [0], duplicate: false });
  a.ok({ epoch: 1, node: 'n1', offsets: [1], duplicate: false });
  const problems = checkStreamHistory(log, read('p1/s0/0/0', 'p0/s0/0/0'), undefined);
  t.deepEqual(problems, [
    's0: epoch 1 (n1) acknowledged offset 1, at or above offset 0 of the later epoch 2 (n2): epochs do not increase along the stream',
  ]);
});

const transfer = (stream: string, target: string, since: number) => ({
  stream,
  source: 'n1',
  target,
  epoch: 1,
  since,
});

test('a transfer pending across a liveness read that shows its target Dead is reported; one that settled or began around it is not', (t) => {
  t.deepEqual(
    checkTransferSamples([
      {
        at: 'n1',
        before: [transfer('s0', 'n2', 10), transfer('s1', 'n3', 11)],
        liveness: { n1: 'Alive', n2: 'Dead', n3: 'Alive' },
        after: [transfer('s0', 'n2', 10), transfer('s1', 'n3', 11)],
      },
    ]),
    ['transfer of s0 from n1 to n2 (since 10) was pending while n2 was Dead (read at n1)'],
  );
  t.deepEqual(
    checkTransferSamples([
      {
        at: 'n1',
        // Gone by the second listing (cancelled as n2 turned Dead), or a new one once it returned.
        before: [transfer('s0', 'n2', 10)],
        liveness: { n1: 'Alive', n2: 'Dead' },
        after: [transfer('s0', 'n2', 14)],
      },
    ]),
    [],
  );
});

test('a killed node whose streams never failed over is reported, and failover times are measured from the kill', (t) => {
  const log = history([
    ['p0', 0, 1, 1, 'n1', 0],
    ['p0', 1, 1, 2, 'n2', 1],
  ]);
  const [before, after] = log.records;
  const killedAt = (before.completedAt! + after.invokedAt) / 2;
  const events = [
    { trigger: 'automatic' as const, node: 'n1', streams: ['s0'], killedAt, movedAt: killedAt + 5 },
    {
      trigger: 'operator' as const,
      node: 'n3',
      streams: ['s1'],
      killedAt,
      stuck: 'still owned by n3 30000 ms after it was killed',
    },
    {
      trigger: 'automatic' as const,
      node: 'n2',
      streams: [],
      killedAt,
      stuck: 'the run ended first',
    },
  ];
  t.deepEqual(checkFailovers(events), [
    `operator failover of n3 (killed at ${(killedAt / 1000).toFixed(1)} s, owner of s1): still owned by n3 30000 ms after it was killed`,
  ]);
  const times = failoverTimes(log, events);
  t.deepEqual(times.moved, [5]);
  t.deepEqual(times.served, [Math.round(after.completedAt! - killedAt)]);
});
