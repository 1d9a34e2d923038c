import test from 'ava';
import { AppliedWaitRefusedError, AppliedWaits } from '@baton/authority-transfer/internal/applied-waits.js';
import { FeedReplicas } from '@baton/authority-transfer/internal/feed-replicas.js';
import { flushMicrotasks, VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { settle } from './harness.js';

const EAST = { member: 'east-1', incarnation: 'inc-1' };
const entries = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ serial: from + i, authority: 'a', operation: `op${from + i}`, epoch: 1 }));

async function setup(limits = { maxWaitMs: 10_000, perRequester: 2, total: 3 }) {
  const clock = new VirtualClock();
  const replicas = new FeedReplicas('west-1');
  await replicas.open(['east-1', 'north-1']);
  await replicas.reset('east-1', EAST.incarnation);
  await replicas.apply('east-1', EAST.incarnation, entries(1, 3));
  return { clock, replicas, waits: new AppliedWaits(replicas, clock, limits) };
}

/** Whether `p` settled, after the microtasks already queued ran (no time moves). */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await flushMicrotasks();
  return done;
}

test('a wait for a serial the replica holds answers at once and parks nothing', async (t) => {
  const { waits } = await setup();
  t.like(await waits.wait(EAST, 3, 1_000, { requester: 'east-1' }), { incarnation: 'inc-1', serial: 3 });
  t.is(waits.size, 0);
});

test('a parked wait answers on the apply that reaches its serial, with no time passing', async (t) => {
  const { clock, replicas, waits } = await setup();
  const start = clock.now();
  const parked = waits.wait(EAST, 5, 1_000, { requester: 'east-1' });
  t.is(waits.size, 1);
  await replicas.apply('east-1', EAST.incarnation, entries(4, 4));
  t.false(await settledYet(parked), 'serial 4 is not yet 5');
  await replicas.apply('east-1', EAST.incarnation, entries(5, 6));
  t.true(await settledYet(parked));
  t.like(await parked, { incarnation: 'inc-1', serial: 6 });
  t.is(clock.now(), start, 'answered by the apply, not a timer');
  t.is(waits.size, 0);
});

test('a wait that runs out answers with what the replica holds then', async (t) => {
  const { clock, replicas, waits } = await setup();
  const parked = waits.wait(EAST, 10, 500, { requester: 'east-1' });
  await replicas.apply('east-1', EAST.incarnation, entries(4, 4));
  await clock.advanceAsync(499);
  t.false(await settledYet(parked));
  await clock.advanceAsync(1);
  t.like(await parked, { serial: 4 });
  t.is(waits.size, 0);
});

test('a wait for another incarnation is not answered by this one, however far it goes', async (t) => {
  const { clock, replicas, waits } = await setup();
  const parked = waits.wait({ member: 'east-1', incarnation: 'inc-2' }, 2, 500, { requester: 'east-1' });
  await replicas.apply('east-1', EAST.incarnation, entries(4, 4));
  t.false(await settledYet(parked));
  await replicas.reset('east-1', 'inc-2');
  await replicas.apply('east-1', 'inc-2', entries(1, 2));
  t.like(await parked, { incarnation: 'inc-2', serial: 2 });
  t.is(clock.now(), 1_700_000_000_000);
});

test('an apply of one feed answers only the waits on that feed', async (t) => {
  const { replicas, waits } = await setup();
  await replicas.reset('north-1', 'inc-n');
  const onNorth = waits.wait({ member: 'north-1', incarnation: 'inc-n' }, 1, 500, { requester: 'east-1' });
  const onEast = waits.wait(EAST, 4, 500, { requester: 'east-1' });
  await replicas.apply('east-1', EAST.incarnation, entries(4, 4));
  t.true(await settledYet(onEast));
  t.false(await settledYet(onNorth));
  t.is(waits.size, 1);
});

test('waits beyond the bounds are refused, per requester and in all, and a freed place is taken again', async (t) => {
  const { clock, waits } = await setup({ maxWaitMs: 1_000, perRequester: 2, total: 3 });
  const a = [waits.wait(EAST, 9, 1_000, { requester: 'east-1' }), waits.wait(EAST, 9, 1_000, { requester: 'east-1' })];
  await t.throwsAsync(waits.wait(EAST, 9, 1_000, { requester: 'east-1' }), { instanceOf: AppliedWaitRefusedError, message: /this requester already holds 2/ });
  const b = waits.wait(EAST, 9, 1_000, { requester: 'north-1' });
  await t.throwsAsync(waits.wait(EAST, 9, 1_000, { requester: 'south-1' }), { instanceOf: AppliedWaitRefusedError, message: /this member already holds 3/ });
  t.is(waits.size, 3);
  await clock.advanceAsync(1_000);
  await Promise.all([...a, b]);
  t.is(waits.size, 0);
  const again = waits.wait(EAST, 9, 1_000, { requester: 'east-1' });
  t.is(waits.size, 1);
  await clock.advanceAsync(1_000);
  t.like(await again, { serial: 3 });
});

test('a wait is never held longer than the bound, whatever it asks', async (t) => {
  const { clock, waits } = await setup({ maxWaitMs: 100, perRequester: 2, total: 3 });
  const parked = waits.wait(EAST, 9, 60_000, { requester: 'east-1' });
  await clock.advanceAsync(100);
  t.true(await settledYet(parked));
});

test('an abort ends a parked wait at once with its reason and frees its place', async (t) => {
  const { waits } = await setup();
  const controller = new AbortController();
  const parked = settle(waits.wait(EAST, 9, 1_000, { requester: 'east-1', signal: controller.signal }));
  t.is(waits.size, 1);
  controller.abort(new Error('cancelled'));
  const outcome = await parked;
  t.is(outcome.ok, false);
  t.is((outcome as { error: Error }).error.message, 'cancelled');
  t.is(waits.size, 0);
  await t.throwsAsync(waits.wait(EAST, 9, 1_000, { requester: 'east-1', signal: controller.signal }), { message: 'cancelled' }, 'an aborted signal parks nothing');
});

test('closing answers every parked wait with what the replicas hold, and later waits answer at once', async (t) => {
  const { waits } = await setup();
  const parked = waits.wait(EAST, 9, 1_000, { requester: 'east-1' });
  waits.close();
  t.like(await parked, { serial: 3 });
  t.like(await waits.wait(EAST, 9, 1_000, { requester: 'east-1' }), { serial: 3 });
  t.is(waits.size, 0);
});
