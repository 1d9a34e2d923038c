import test from 'ava';
import { MemberTracker } from '@baton/authority-transfer/internal/member-tracker.js';
import { Roster } from '@baton/authority-transfer/internal/roster.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

const roster = new Roster({
  east: { members: { 'east-1': { public: 'http://e1' } } },
  west: { members: { 'west-1': { public: 'http://w1' }, 'west-2': { public: 'http://w2' } } },
});

test('members go Alive -> Suspect -> Dead with silence, and back to Alive when heard', (t) => {
  const clock = new VirtualClock();
  const tracker = new MemberTracker(clock, roster, 'east-1', { suspectAfterMs: 100, deadAfterMs: 300 });
  t.is(tracker.state('west-1'), 'Alive');
  clock.advance(100);
  t.is(tracker.state('west-1'), 'Suspect');
  clock.advance(200);
  t.is(tracker.state('west-1'), 'Dead');
  tracker.heard('west-1');
  t.is(tracker.state('west-1'), 'Alive');
  t.is(tracker.state('east-1'), 'Alive', 'a member is alive to itself');
});

test('a datacenter is Dead only when every member is', (t) => {
  const clock = new VirtualClock();
  const tracker = new MemberTracker(clock, roster, 'east-1', { suspectAfterMs: 100, deadAfterMs: 300 });
  clock.advance(250);
  tracker.heard('west-2');
  clock.advance(50);
  t.is(tracker.state('west-1'), 'Dead');
  t.is(tracker.datacenterState('west'), 'Alive');
  clock.advance(250);
  t.is(tracker.datacenterState('west'), 'Dead');
  t.is(tracker.datacenterState('nowhere'), 'Dead');
});

test('thresholds that make no sense are refused', (t) => {
  t.throws(() => new MemberTracker(new VirtualClock(), roster, 'east-1', { suspectAfterMs: 300, deadAfterMs: 100 }), {
    message: /must exceed/,
  });
});

test('the roster refuses a member listed in two datacenters', (t) => {
  t.throws(
    () => new Roster({ a: { members: { m: { public: 'http://x' } } }, b: { members: { m: { public: 'http://y' } } } }),
    { message: /both a and b/ },
  );
});
