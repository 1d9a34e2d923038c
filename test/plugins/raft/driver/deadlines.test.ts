import test from 'ava';
import { Deadlines, type Deadline } from '@baton/plugin-raft/internal/driver/deadlines.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

test('deadlines fire in deadline order, only once due, and never after cancel', (t) => {
  const d = new Deadlines();
  const fired: string[] = [];
  const on = (name: string) => ({ expire: () => fired.push(name) });
  d.add(30, on('c'));
  d.add(10, on('a'));
  const b = d.add(20, on('b'));
  d.add(20, on('b2'));
  d.sweep(9);
  t.deepEqual(fired, []);
  d.cancel(b);
  d.sweep(20);
  t.deepEqual(fired, ['a', 'b2']);
  d.cancel(b); // a second cancel is a no-op
  d.sweep(100);
  t.deepEqual(fired, ['a', 'b2', 'c']);
  t.is(d.size, 0);
});

test('deadlines stay ordered through many random adds and cancels', (t) => {
  const rng = new SeededRng(7);
  const d = new Deadlines();
  const live = new Map<number, Deadline>();
  const fired: number[] = [];
  for (let id = 0; id < 2_000; id++) {
    const at = rng.int(1_000);
    const handle = d.add(at, {
      expire: () => {
        fired.push(at);
        live.delete(id);
      },
    });
    live.set(id, handle);
    if (rng.int(3) === 0) {
      const victim = [...live.keys()][rng.int(live.size)];
      d.cancel(live.get(victim)!);
      live.delete(victim);
    }
  }
  const expected = [...live.values()].map((l) => l.at).sort((a, b) => a - b);
  for (let now = 0; now <= 1_000; now += 37) d.sweep(now);
  t.deepEqual(
    fired,
    expected,
    'every live deadline fired once, earliest first, and no cancelled one did',
  );
  t.is(d.size, 0);
});
