import test from 'ava';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { SystemRng } from '@baton/kernel/internal/system-rng.js';

test('a seeded rng replays the same sequence for the same seed, and differs across seeds', (t) => {
  const a = new SeededRng(42);
  const b = new SeededRng(42);
  const c = new SeededRng(43);
  const seqA = Array.from({ length: 50 }, () => a.next());
  t.deepEqual(seqA, Array.from({ length: 50 }, () => b.next()));
  t.notDeepEqual(seqA, Array.from({ length: 50 }, () => c.next()));
  t.true(seqA.every((x) => x >= 0 && x < 1));
});

test('seeded int stays in range and covers it', (t) => {
  const rng = new SeededRng(7);
  const seen = new Set<number>();
  for (let i = 0; i < 1000; i++) {
    const x = rng.int(6);
    t.true(Number.isInteger(x) && x >= 0 && x < 6);
    seen.add(x);
  }
  t.is(seen.size, 6);
  t.throws(() => rng.int(0), { instanceOf: RangeError });
});

test('forked rngs are independent of draws on the parent', (t) => {
  const one = new SeededRng(5);
  const two = new SeededRng(5);
  two.next();
  t.is(one.fork('net').next(), two.fork('net').next());
  t.not(one.fork('net').next(), one.fork('disk').next());
});

test('hex gives two lowercase hex digits per byte', (t) => {
  t.regex(new SeededRng(1).hex(16), /^[0-9a-f]{32}$/);
  t.regex(new SystemRng().hex(8), /^[0-9a-f]{16}$/);
});

test('virtual timers fire only when time is advanced, in due order, ties in arming order', (t) => {
  const clock = new VirtualClock(0);
  const fired: string[] = [];
  clock.setTimer(20, () => fired.push('b'));
  clock.setTimer(10, () => fired.push('a'));
  clock.setTimer(20, () => fired.push('c'));
  const cancelled = clock.setTimer(15, () => fired.push('never'));
  cancelled.cancel();
  t.deepEqual(fired, []);
  clock.advance(19);
  t.deepEqual(fired, ['a']);
  t.is(clock.now(), 19);
  clock.advance(1);
  t.deepEqual(fired, ['a', 'b', 'c']);
});

test('a timer armed by a firing timer runs within the same advance when due', (t) => {
  const clock = new VirtualClock(0);
  const fired: number[] = [];
  clock.setTimer(5, () => {
    fired.push(clock.now());
    clock.setTimer(5, () => fired.push(clock.now()));
  });
  clock.advance(10);
  t.deepEqual(fired, [5, 10]);
});

test('virtual sleep resolves on advance and rejects on abort, releasing its timer', async (t) => {
  const clock = new VirtualClock(0);
  let done = false;
  const sleeping = clock.sleep(100).then(() => (done = true));
  await clock.advanceAsync(99);
  t.false(done);
  await clock.advanceAsync(1);
  await sleeping;
  t.true(done);

  const controller = new AbortController();
  const aborted = clock.sleep(100, controller.signal);
  controller.abort(new Error('called off'));
  await t.throwsAsync(aborted, { message: 'called off' });
  t.is(clock.nextDue(), undefined);
});

test('the system rng draws floats in [0, 1) and integers in range', (t) => {
  const rng = new SystemRng();
  const draws = Array.from({ length: 2000 }, () => rng.next());
  t.true(draws.every((x) => x >= 0 && x < 1));
  t.true(new Set(draws).size > 1990, 'draws are not repeated');
  t.true(draws.some((x) => x < 0.1) && draws.some((x) => x > 0.9), 'draws spread over the range');
  for (let i = 0; i < 200; i++) {
    const x = rng.int(3);
    t.true(x === 0 || x === 1 || x === 2);
  }
});
