import test from 'ava';
import { OperationLog } from './operation-log.js';
import {
  checkStreamHistory,
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
  t.true(problems.some((p) => p.includes('epoch went back from 2')));
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
