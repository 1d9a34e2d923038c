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
