import test from 'ava';
import { CLOCK_READING_TTL_MS, ClockSkew, type ClockSkewExcess } from '@baton/authority-transfer/internal/clock-skew.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

// A peer's clock is read off each feed pull: its page's clock against the middle of the round
// trip, known to within half of it. Only a skew certainly past the bound counts.

test('the offset is taken at the middle of the round trip, with half of it as its uncertainty', (t) => {
  const clock = new VirtualClock(1_000_000);
  const skew = new ClockSkew(5_000, clock);
  skew.note('west-1', 1_000_000, 1_000_200, 1_003_100);
  t.deepEqual(skew.all(), [{ peer: 'west-1', offsetMs: 3_000, uncertaintyMs: 100, at: 1_000_200 }]);
  t.is(skew.exceeded(), undefined, 'within the bound');
});

test('a peer certainly past the bound is named, the worst first; one within the uncertainty is not', (t) => {
  const clock = new VirtualClock(0);
  const skew = new ClockSkew(5_000, clock);
  // 5,400 ms ahead, but known only to within 500 ms: maybe 4,900, so not certainly past.
  skew.note('north-1', 0, 1_000, 5_900);
  t.is(skew.exceeded(), undefined);
  skew.note('west-1', 0, 10, 6_005);
  skew.note('east-2', 0, 10, -20_000 + 5);
  t.like(skew.exceeded(), { peer: 'east-2', offsetMs: -20_000, boundMs: 5_000 });
  skew.note('east-2', 0, 10, 5);
  t.like(skew.exceeded(), { peer: 'west-1', offsetMs: 6_000 });
});

test('a reading older than a minute says nothing of the clocks now', (t) => {
  const clock = new VirtualClock(0);
  const skew = new ClockSkew(1_000, clock);
  skew.note('west-1', 0, 0, 9_000);
  t.truthy(skew.exceeded());
  clock.advance(CLOCK_READING_TTL_MS + 1);
  t.is(skew.exceeded(), undefined);
  t.is(skew.all().length, 1, 'the last reading is still shown');
});

test('what is not a clock reading (absent, not a number, an answer before its request) is no reading', (t) => {
  const skew = new ClockSkew(1_000, new VirtualClock(0));
  for (const value of [undefined, null, '9000', Number.NaN, Number.POSITIVE_INFINITY]) skew.note('west-1', 0, 10, value);
  skew.note('west-1', 10, 0, 9_000);
  t.deepEqual(skew.all(), []);
});

test('crossing the bound either way is told once per crossing', (t) => {
  const changes: (ClockSkewExcess | undefined)[] = [];
  const skew = new ClockSkew(1_000, new VirtualClock(0), (excess) => changes.push(excess));
  skew.note('west-1', 0, 0, 500);
  skew.note('west-1', 0, 0, 2_000);
  skew.note('west-1', 0, 0, 3_000);
  skew.note('west-1', 0, 0, 100);
  skew.note('west-1', 0, 0, 200);
  t.is(changes.length, 2);
  t.like(changes[0], { peer: 'west-1', offsetMs: 2_000, boundMs: 1_000 });
  t.is(changes[1], undefined);
});
