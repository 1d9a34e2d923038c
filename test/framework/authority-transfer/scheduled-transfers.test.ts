import test from 'ava';
import type { ClockSkewExcess } from '@baton/authority-transfer/internal/clock-skew.js';
import { CatchUpTimeoutError, ClockSkewError, InvalidTransferRequestError, TransferCancelledError } from '@baton/authority-transfer/internal/transfer-errors.js';
import { clusterHarness } from './cluster-harness.js';
import { engineHarness, establish, request, settle } from './harness.js';

// A scheduled planned transfer (not_before, not_after): registered at once, so it holds the
// authority's one transfer and any member can cancel it; nothing read nor frozen before its
// start; past not_after it is abandoned with no audit, like a budget timeout.

type Cluster = Awaited<ReturnType<typeof clusterHarness>>;

async function withProj() {
  const c = await clusterHarness();
  await c.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  await c.members['east-1'].fence.write('proj', 1, 'op0');
  return c;
}

const eastOrigin = (c: Cluster) => c.members['east-1'].feed.origin();
const toNorth = (overrides = {}) => request({ target: 'north', reason: 'drain east', ...overrides });
const MINUTE = 60_000;

test('a scheduled transfer answers once registered, with its status; it freezes nothing before not_before and commits after it', async (t) => {
  const c = await withProj();
  c.holds('north', eastOrigin(c), 1);
  const start = c.clock.now() + 10 * MINUTE;
  const answer = await settle(c.members['west-1'].engine.schedule(toNorth({ id: 'k1', notBefore: start })));
  t.true(answer.ok, JSON.stringify(answer));
  t.like(answer.ok && answer.value, { status: { id: 'k1', driver: 'west-1', not_before: new Date(start).toISOString(), frozen: false } });
  t.like(c.log.view().state.transfers.get('proj'), { id: 'k1', notBefore: start, frozen: false });
  for (const at of ['east-1', 'north-1'] as const) t.like(c.members[at].engine.status('proj'), { id: 'k1', not_before: new Date(start).toISOString() }, `${at} shows it scheduled`);
  await c.clock.advanceAsync(10 * MINUTE - 1_000);
  t.is(c.moves(), 0, 'nothing moves before its start');
  t.false(c.log.view().state.transfers.get('proj')!.frozen, 'nothing is frozen before its start');
  await t.notThrowsAsync(c.members['east-1'].fence.write('proj', 1, 'still accepted'));
  c.holds('north', eastOrigin(c), 2);
  await c.clock.advanceAsync(5_000);
  t.is(c.moves(), 1, 'it commits once started');
  t.like(await c.members['west-1'].audit.byId('k1'), { id: 'k1', target: 'north', barrier: 2 });
});

test('a scheduled transfer is cancelled at any member before it starts: the cancel answers 204, its run 409, and nothing moves at its start', async (t) => {
  const c = await withProj();
  c.holds('north', eastOrigin(c), 1);
  const start = c.clock.now() + MINUTE;
  t.true((await settle(c.members['west-1'].engine.schedule(toNorth({ id: 'k1', notBefore: start })))).ok);
  const retry = settle(c.members['west-1'].engine.start(toNorth({ id: 'k1', notBefore: start })));
  await c.members['north-1'].engine.cancel('proj');
  const ended = await retry;
  t.true(!ended.ok && ended.error instanceof TransferCancelledError, JSON.stringify(ended));
  await c.clock.advanceAsync(2 * MINUTE);
  t.is(c.moves(), 0);
  t.false(c.log.view().state.transfers.has('proj'));
});

test('a scheduled transfer not committed by not_after is abandoned with no audit, and its registration released', async (t) => {
  const c = await withProj();
  const start = c.clock.now() + MINUTE;
  const scheduled = { id: 'k1', notBefore: start, notAfter: start + 30_000 };
  t.true((await settle(c.members['west-1'].engine.schedule(toNorth(scheduled)))).ok);
  // north never catches up: the run spends its window probing, then gives up.
  const run = settle(c.members['west-1'].engine.start(toNorth(scheduled)));
  await c.clock.advanceAsync(2 * MINUTE);
  const ended = await run;
  t.true(!ended.ok && ended.error instanceof CatchUpTimeoutError && ended.error.status === 504, JSON.stringify(ended));
  t.is(c.moves(), 0);
  t.false(c.log.view().state.transfers.has('proj'), 'released behind the timeout');
  t.is(await c.members['west-1'].audit.byId('k1'), undefined, 'no audit');
});

test('a schedule out of order, past, or beyond 7 days is refused (400) and registers nothing', async (t) => {
  const c = await withProj();
  const now = c.clock.now();
  for (const [schedule, why] of [
    [{ notAfter: now - 1 }, /not_after has passed/],
    [{ notBefore: now + MINUTE, notAfter: now + MINUTE }, /not_after must be later than not_before/],
    [{ notBefore: now + 8 * 24 * 60 * MINUTE }, /not_before is more than 7 days ahead/],
  ] as const) {
    const refused = await settle(c.members['west-1'].engine.schedule(toNorth({ id: 'k1', ...schedule })));
    t.true(!refused.ok && refused.error instanceof InvalidTransferRequestError && refused.error.status === 400, JSON.stringify(refused));
    t.regex((refused as { error: Error }).error.message, why);
  }
  t.false(c.log.view().state.transfers.has('proj'));
});

test('the clocks are checked again at a scheduled start: a peer past the bound by then releases it unstarted (503 clock-skew), nothing moved', async (t) => {
  const skew: { excess?: ClockSkewExcess } = {};
  const h = await engineHarness({ clocks: { exceeded: () => skew.excess } });
  await establish(h.consensus, 'proj', 'east');
  const start = h.clock.now() + MINUTE;
  const scheduled = request({ id: 'k1', notBefore: start });
  t.true((await settle(h.engine.schedule(scheduled))).ok, 'registered while the clocks agreed');
  const run = settle(h.engine.start(scheduled));
  skew.excess = { peer: 'west-1', offsetMs: 9_000, uncertaintyMs: 2, at: h.clock.now(), boundMs: 5_000 };
  await h.clock.advanceAsync(MINUTE + 1_000);
  const ended = await run;
  t.true(!ended.ok && ended.error instanceof ClockSkewError && ended.error.status === 503, JSON.stringify(ended));
  t.regex((ended as { error: Error }).error.message, /released at its scheduled start, unstarted: the clock of west-1 is 9000 ms ahead/);
  await h.clock.advanceAsync(1_000);
  t.false(h.consensus.view().state.transfers.has('proj'), 'its registration is released');
  t.is(h.consensus.view().state.authorities.get('proj')!.home, 'east');
  h.engine.stop();
});

