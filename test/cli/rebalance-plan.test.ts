import test from 'ava';
import { rebalancePlanLines } from '@baton/cli/internal/streams/rebalance-plan.js';

test('a large plan shows its size, the moves the answer carried, how many more, and the whole plan per node', (t) => {
  const lines = rebalancePlanLines(
    {
      planned: 250,
      moves: [
        { stream: 's1', source: 'a', target: 'b' },
        { stream: 's2', source: null, target: 'c' },
      ],
      truncated: true,
      byNode: [
        { node: 'a', out: 250, in: 0 },
        { node: 'b', out: 0, in: 125 },
        { node: 'c', out: 0, in: 125 },
      ],
    },
    new Map([
      ['a', 300],
      ['b', 50],
    ]),
    'would move',
  );
  t.is(lines[0], 'would move 250 stream(s):');
  t.is(lines[1], '  s1: a -> b');
  t.is(lines[2], '  s2: (gone) -> c');
  t.is(lines[3], '  ... and 248 more');
  const row = (node: string) => lines.find((l) => l.startsWith(node))!.trim().split(/\s+/);
  t.deepEqual(row('a'), ['a', '300', '250', '0', '50']);
  t.deepEqual(row('b'), ['b', '50', '0', '125', '175']);
  t.deepEqual(row('c'), ['c', '0', '0', '125', '125']);
});

test('an empty plan says the streams are balanced', (t) => {
  t.deepEqual(rebalancePlanLines({ planned: 0, moves: [], truncated: false, byNode: [] }, new Map(), 'moving'), ['the streams are balanced: nothing to move']);
});
