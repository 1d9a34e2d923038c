import test from 'ava';
import { TransferCancelledError } from '@baton/authority-transfer/internal/transfer-errors.js';
import { flushMicrotasks } from '@baton/conformance/internal/virtual-clock.js';
import { clusterHarness } from './cluster-harness.js';
import { request, settle } from './harness.js';

type Cluster = Awaited<ReturnType<typeof clusterHarness>>;

// Backoff steps far longer than anything else here: a plan that waited one out would show.
const SLOW_STEPS = { initialDelayMs: 1_000, maxDelayMs: 1_000 };

async function cluster(frontierWaitMs: number) {
  const c = await clusterHarness({ waitingProbes: true, engine: { schedule: SLOW_STEPS, freezeSchedule: SLOW_STEPS, frontierWaitMs, freezeBudgetMs: 60_000 } });
  await c.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  return c;
}

const eastOrigin = (c: Cluster) => c.members['east-1'].feed.origin();

/**
 * east -> north at east-1, frozen with north behind its final serial: the barrier is 2, a
 * write acknowledged while the transfer waits makes the final serial 3, and north holds 2.
 */
async function frozenBehindFinal(c: Cluster) {
  for (let i = 0; i < 2; i++) await c.members['east-1'].fence.write('proj', 1, `op${i}`);
  const run = settle(c.members['east-1'].engine.start(request({ target: 'north', reason: 'drain east' })));
  await c.clock.advanceAsync(20);
  await c.members['east-1'].fence.write('proj', 1, 'while waiting');
  c.holds('north', eastOrigin(c), 2);
  await c.clock.advanceAsync(20);
  return { run };
}

test('the freeze ends on the target apply of the final serial, not at the next re-probe', async (t) => {
  const c = await cluster(2_000);
  const { run } = await frozenBehindFinal(c);
  t.like(c.members['east-1'].engine.status('proj'), { frozen: true, barrier: 3, state: 'AwaitingCatchUp' });
  t.is(c.parkedAt('north'), 1, 'the probe waits at the target for the final serial');
  await c.clock.advanceAsync(500);
  t.is(c.moves(), 0, 'nothing moves while north lacks the final serial');
  const appliedAt = c.clock.now();
  c.holds('north', eastOrigin(c), 3);
  await flushMicrotasks(200);
  t.is(c.moves(), 1, 'committed on the apply');
  t.is(c.clock.now(), appliedAt, 'with no virtual time passing: no backoff step was waited out');
  t.like(await run, { ok: true, value: { barrier: 3, epoch: 2, target: 'north' } });
  t.is(c.parkedAt('north'), 0);
});

test('without waiting probes the same freeze waits out a backoff step (what the wait saves)', async (t) => {
  const c = await cluster(0);
  const { run } = await frozenBehindFinal(c);
  // The barrier is noticed at a re-probe too; the probe right after the freeze reads 2.
  await c.clock.advanceAsync(SLOW_STEPS.maxDelayMs + 10);
  t.like(c.members['east-1'].engine.status('proj'), { frozen: true, barrier: 3 });
  t.is(c.parkedAt('north'), 0, 'the probes answer at once');
  c.holds('north', eastOrigin(c), 3);
  await flushMicrotasks(200);
  t.is(c.moves(), 0, 'not noticed until the next re-probe');
  await c.clock.advanceAsync(SLOW_STEPS.maxDelayMs + 10);
  t.is(c.moves(), 1);
  t.like(await run, { ok: true, value: { barrier: 3 } });
});

test('a wait that runs out is asked again at once, and the apply after it still ends the freeze', async (t) => {
  const c = await cluster(100);
  const { run } = await frozenBehindFinal(c);
  await c.clock.advanceAsync(350);
  t.is(c.parkedAt('north'), 1, 'asked again as each wait ran out, with no backoff step between');
  t.is(c.moves(), 0);
  const appliedAt = c.clock.now();
  c.holds('north', eastOrigin(c), 3);
  await flushMicrotasks(200);
  t.is(c.moves(), 1);
  t.is(c.clock.now(), appliedAt);
  t.like(await run, { ok: true });
});

test('a cancel that lands during a waiting probe ends that wait and the run, and frees the target place', async (t) => {
  const c = await cluster(2_000);
  const { run } = await frozenBehindFinal(c);
  t.is(c.parkedAt('north'), 1);
  const cancelledAt = c.clock.now();
  await c.members['east-1'].engine.cancel('proj');
  const outcome = await run;
  t.true(!outcome.ok && outcome.error instanceof TransferCancelledError);
  t.is(c.clock.now(), cancelledAt, 'the parked probe did not hold the run');
  t.is(c.parkedAt('north'), 0, 'the abort freed the parked wait');
  c.holds('north', eastOrigin(c), 3);
  await c.clock.advanceAsync(5_000);
  t.is(c.moves(), 0);
});

test('the barrier catch-up is woken by the apply too', async (t) => {
  const c = await cluster(2_000);
  for (let i = 0; i < 4; i++) await c.members['east-1'].fence.write('proj', 1, `op${i}`);
  const run = settle(c.members['east-1'].engine.start(request({ target: 'north', reason: 'drain east' })));
  await c.clock.advanceAsync(20);
  t.like(c.members['east-1'].engine.status('proj'), { frozen: false, barrier: 4, state: 'AwaitingCatchUp' });
  t.is(c.parkedAt('north'), 1);
  const appliedAt = c.clock.now();
  c.holds('north', eastOrigin(c), 4);
  // The probe after the freeze takes the harness's 1 ms of network: a few ms, never a step.
  for (let i = 0; i < 10 && c.moves() === 0; i++) await c.clock.advanceAsync(1);
  t.is(c.moves(), 1, 'frozen, final serial recorded, probed and committed on the one apply');
  t.true(c.clock.now() - appliedAt < SLOW_STEPS.initialDelayMs);
  t.like(await run, { ok: true, value: { barrier: 4 } });
});
