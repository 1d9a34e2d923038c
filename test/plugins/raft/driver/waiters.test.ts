import test from 'ava';
import type { Receipt } from '@baton/contracts/internal/metadata-consensus.js';
import { Waiters, type Waiter } from '@baton/plugin-raft/internal/driver/waiter.js';

const waiter = (name: string): Waiter & { name: string } => ({
  name,
  index: 0,
  term: 0,
  joined: false,
  next: undefined,
  succeed: (_r: Receipt<unknown>) => undefined,
  fail: (_e: Error) => undefined,
});

const names = (head: Waiter | undefined): string[] => {
  const out: string[] = [];
  for (let w = head; w; w = w.next) out.push((w as Waiter & { name: string }).name);
  return out;
};

test('waiters are taken by index, with retries that joined an entry already in the log', (t) => {
  const ws = new Waiters();
  ws.add(5, 1, waiter('a5'));
  ws.add(6, 1, waiter('a6'));
  ws.add(7, 1, waiter('a7'));
  // A retry joins index 6, below the newest append: it must still be answered with 6.
  ws.add(6, 1, waiter('j6'));
  ws.add(3, 1, waiter('j3'));
  t.deepEqual(names(ws.take(3)), ['j3']);
  t.deepEqual(names(ws.take(4)), []);
  t.deepEqual(names(ws.take(5)), ['a5']);
  t.deepEqual(names(ws.take(6)), ['a6', 'j6']);
  t.deepEqual(names(ws.take(6)), [], 'taken once');
  ws.add(9, 2, waiter('a9'));
  t.deepEqual(
    ws.clear().map((w) => (w as Waiter & { name: string }).name),
    ['a7', 'a9'],
  );
  t.deepEqual(names(ws.take(7)), [], 'clear forgot them');
});

test('waiters taken in index order while more are added are each taken exactly once', (t) => {
  const ws = new Waiters();
  const seen: string[] = [];
  let applied = 0;
  for (let i = 1; i <= 5_000; i++) {
    ws.add(i, 1, waiter(`w${i}`));
    // Entries apply in order, lagging behind the appends.
    if (i % 3 === 0) for (let k = 0; k < 2; k++) seen.push(...names(ws.take(++applied)));
  }
  while (applied < 5_000) seen.push(...names(ws.take(++applied)));
  t.is(seen.length, 5_000);
  t.is(new Set(seen).size, 5_000);
  t.deepEqual(ws.clear(), []);
});
