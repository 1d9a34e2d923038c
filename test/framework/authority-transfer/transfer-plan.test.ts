import test from 'ava';
import { AbandonedWindow } from '@baton/authority-transfer/internal/abandoned-window.js';
import { datacenterFrontier } from '@baton/authority-transfer/internal/frontier-probe.js';
import { reprobeDelay } from '@baton/authority-transfer/internal/reprobe-schedule.js';
import { TransferPlan } from '@baton/authority-transfer/internal/transfer-plan.js';
import { request } from './harness.js';

/** A plan whose one source feed must reach serial 10. */
const plan = () => {
  const p = new TransferPlan(request(), 0, 1000);
  p.cursors = [{ origin: { member: 'east-1', incarnation: 'i1' }, barrier: 10, frontier: undefined, replica: undefined }];
  return p;
};

/** A target's reading from its first replica storage. */
const at = (serial: number, replica = 'r1') => ({ serial, replica });

test('folding is monotonic: a lower or missing reading never un-readies a plan', (t) => {
  const p = plan();
  p.fold([at(4)], 1);
  t.is(p.state, 'AwaitingCatchUp');
  p.fold([at(10)], 2);
  t.is(p.state, 'Ready');
  p.fold([at(3)], 3);
  p.fold([undefined], 4);
  t.is(p.frontier, 10);
  t.is(p.state, 'Ready');
  t.is(p.lastReadingAt, 4);
});

test('a plan with several source feeds is Ready only once the target reached the barrier of each', (t) => {
  const p = plan();
  p.cursors.push({ origin: { member: 'east-2', incarnation: 'j1' }, barrier: 3, frontier: undefined, replica: undefined });
  p.fold([at(12), undefined], 1);
  t.is(p.state, 'AwaitingCatchUp');
  t.is(p.frontier, undefined, 'no frontier until every feed has one');
  p.fold([undefined, at(2)], 2);
  t.is(p.state, 'AwaitingCatchUp');
  t.is(p.frontier, 2);
  p.fold([undefined, at(3)], 3);
  t.is(p.state, 'Ready');
  t.is(p.barrier, 10, 'the barrier reported is the highest one');
});

test('following a frozen registration makes the final serials the barriers; a frontier already past them keeps the plan Ready', (t) => {
  const p = plan();
  p.fold([at(10)], 1);
  const intent = {
    id: 'k', authority: 'proj', source: 'east', target: 'west', actor: 'a', reason: 'r', driver: 'west-1',
    sources: [{ member: 'east-1', incarnation: 'i1', barrier: 10, final: 14 }],
    deadline: 1000, frozen: true, freezes: 1, registered: 3,
  };
  p.follow(intent);
  t.is(p.state, 'AwaitingCatchUp', 'the target must now reach the final serial');
  t.is(p.barrier, 14);
  t.true(p.frozen);
  p.fold([at(14)], 2);
  t.is(p.state, 'Ready');
  p.follow({ ...intent, sources: [{ member: 'east-1', incarnation: 'i2', barrier: 0, final: 2 }] });
  t.is(p.frontier, undefined, 'a reading of another incarnation counts for nothing');
  t.is(p.state, 'AwaitingCatchUp');
});

test('a reading from another replica storage replaces the frontier: a target that lost its disk is caught up again', (t) => {
  const p = plan();
  p.fold([at(10)], 1);
  t.is(p.state, 'Ready');
  p.fold([at(0, 'r2')], 2);
  t.is(p.frontier, 0, 'the wiped replica holds nothing of what the old one did');
  t.is(p.state, 'AwaitingCatchUp', 'the plan is no longer ready');
  p.fold([at(10)], 3);
  t.is(p.frontier, 10, 'a reading back from the first storage counts afresh, not as a higher one');
  p.fold([at(4, 'r2')], 4);
  t.is(p.state, 'AwaitingCatchUp');
  p.fold([at(10, 'r2')], 5);
  t.is(p.state, 'Ready');
});

test('a Ready plan needs a reading taken after its cursors last changed before it goes on', (t) => {
  const p = plan();
  p.fold([at(10)], 1);
  t.false(p.needsReading());
  p.follow({
    id: 'k', authority: 'proj', source: 'east', target: 'west', actor: 'a', reason: 'r', driver: 'west-1',
    sources: [{ member: 'east-1', incarnation: 'i1', barrier: 10, final: 10 }],
    deadline: 1000, frozen: true, freezes: 1, registered: 3,
  });
  t.is(p.state, 'Ready', 'the frontier read before the freeze already covers the final serial');
  t.true(p.needsReading(), 'but the claim waits for a probe after the freeze');
  p.fold([undefined], 2);
  t.true(p.needsReading(), 'a missing reading does not count');
  p.fold([at(10)], 3);
  t.false(p.needsReading());
});

test('no frontier never advances a plan', (t) => {
  const p = plan();
  p.fold([undefined], 1);
  t.is(p.frontier, undefined);
  t.is(p.state, 'AwaitingCatchUp');
});

test('only a Ready plan can be claimed, once; from the claim on it cannot be abandoned', (t) => {
  const p = plan();
  t.false(p.claim());
  p.fold([at(10)], 1);
  t.true(p.claim());
  t.false(p.claim());
  t.false(p.abandon('late cancel'));
  p.release();
  t.is(p.state, 'Ready');
  t.true(p.abandon('cancel'));
  t.true(p.signal.aborted);
});

test('the abandoned window keeps the most recent authorities, bounded', (t) => {
  const w = new AbandonedWindow(2);
  w.remember('a', 'k1');
  w.remember('b', 'k2');
  w.remember('a', 'k3');
  w.remember('c', 'k4');
  t.is(w.get('b'), undefined, 'b was the oldest once a was refreshed');
  t.is(w.get('a'), 'k3');
  t.is(w.size, 2);
});

test('the abandoned window knows what each key asked and why it was released, past later abandons of the same authority', (t) => {
  const w = new AbandonedWindow(2, 3);
  const move = { source: 'east', target: 'west', reason: 'drain' };
  w.remember('a', 'k1', move);
  t.like(w.lookup('k1'), { authority: 'a', request: move, why: undefined });
  w.remember('a', 'k1', undefined, 'expired');
  t.like(w.lookup('k1'), { authority: 'a', request: move, why: 'expired' }, 'told again without the request, what was known stays');
  w.remember('a', 'k2', { ...move, target: 'north' }, 'cancelled');
  t.is(w.get('a'), 'k2', 'the authority answers for its latest abandoned transfer');
  t.like(w.lookup('k1'), { authority: 'a', request: move }, 'the older key of the same authority is still known');
  w.remember('b', 'k3');
  w.remember('c', 'k4');
  t.is(w.get('a'), undefined, 'past the window the authority is forgotten');
  t.is(w.lookup('k1'), undefined, 'past its own bound the oldest key is forgotten');
  t.like(w.lookup('k2'), { authority: 'a', why: 'cancelled' });
  t.is(w.size, 2);
});

test('a datacenter has a frontier only when every member answered: the lowest one, over every member replica', (t) => {
  const m = (member: string, serial: number, replica?: string) => ({ member, serial, replica });
  t.deepEqual(datacenterFrontier([m('a', 5, 'x'), m('c', 3, 'z'), m('b', 9)]), { serial: 3, replica: 'a=x,b=none,c=z' });
  t.is(datacenterFrontier([m('a', 5, 'x'), undefined]), undefined);
  t.is(datacenterFrontier([]), undefined, 'a datacenter without members has none');
});

test('re-probe delays grow and stay bounded', (t) => {
  const schedule = { initialDelayMs: 100, maxDelayMs: 1_000 };
  t.deepEqual([0, 1, 2, 3, 4, 50].map((a) => reprobeDelay(schedule, a)), [100, 200, 400, 800, 1_000, 1_000]);
});
