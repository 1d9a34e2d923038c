import test from 'ava';
import { clusterHarness } from './cluster-harness.js';
import { request, settle } from './harness.js';

// The driver is a follower answered by the leader before it applied its own proposals, as a
// Raft follower forwarding them is: its view lags the answers by LAG_MS.
const LAG_MS = 100;

async function laggingCluster() {
  const c = await clusterHarness({ followerApplyLagMs: LAG_MS });
  await c.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  await c.clock.advanceAsync(2 * LAG_MS);
  for (let i = 0; i < 3; i++) await c.members['east-1'].fence.write('proj', 1, `op${i}`);
  return c;
}

const toNorth = () => request({ id: 'lagging-move', target: 'north', reason: 'drain east' });

test('a driver whose view lags the leader commits the move: an older entry naming the authority, applied after its registration was answered, does not cancel it', async (t) => {
  const c = await laggingCluster();
  // Applied by the leader now and by west-1 only after west-1's registration was answered.
  await c.log.propose({ type: 'release_transfer', authority: 'proj', id: 'nothing-registered', why: 'cancelled' });
  const run = settle(c.members['west-1'].engine.start(toNorth()));
  c.holds('north', c.members['east-1'].feed.origin(), 3);
  for (let i = 0; i < 200 && c.moves() === 0; i++) await c.clock.advanceAsync(10);
  t.like(await run, { ok: true, value: { id: 'lagging-move', barrier: 3, epoch: 2, target: 'north' } });
  t.is(c.moves(), 1);
});

test('a lagging driver freezes, waits for the final serial and commits, never taking its own view for a released registration', async (t) => {
  const c = await laggingCluster();
  const run = settle(c.members['west-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(3 * LAG_MS);
  // A write acknowledged while it waits: the move must wait for it as well.
  await c.members['east-1'].fence.write('proj', 1, 'while waiting');
  c.holds('north', c.members['east-1'].feed.origin(), 3);
  await c.clock.advanceAsync(5 * LAG_MS);
  t.is(c.moves(), 0, 'the target lacks the final serial 4');
  c.holds('north', c.members['east-1'].feed.origin(), 4);
  for (let i = 0; i < 200 && c.moves() === 0; i++) await c.clock.advanceAsync(10);
  t.like(await run, { ok: true, value: { id: 'lagging-move', barrier: 4, epoch: 2 } });
});

test('a driver that does not see its own freeze applied within the freeze budget lifts it: the source takes writes again', async (t) => {
  const c = await clusterHarness({ followerApplyLagMs: LAG_MS, engine: { freezeBudgetMs: LAG_MS / 2 } });
  await c.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  await c.clock.advanceAsync(2 * LAG_MS);
  c.holds('north', c.members['east-1'].feed.origin(), 0);
  let frozenAt: number | undefined;
  let longest = 0;
  c.log.watch((view) => {
    const frozen = view.state.transfers.get('proj')?.frozen === true;
    if (frozen && frozenAt === undefined) frozenAt = c.clock.now();
    if (!frozen && frozenAt !== undefined) {
      longest = Math.max(longest, c.clock.now() - frozenAt);
      frozenAt = undefined;
    }
  });
  const run = settle(c.members['west-1'].engine.start(toNorth()));
  for (let i = 0; i < 100 && longest === 0; i++) await c.clock.advanceAsync(10);
  t.true(longest > 0, 'the freeze was lifted');
  t.true(longest <= LAG_MS, `held ${longest} ms, within the budget plus one forwarding hop`);
  t.true(c.log.view().state.transfers.has('proj'), 'still registered: it freezes again later');
  await c.members['west-1'].engine.cancel('proj');
  t.false((await run).ok);
});
