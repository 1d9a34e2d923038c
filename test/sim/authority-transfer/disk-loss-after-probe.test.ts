import test from 'ava';
import { HomeCatchingUpError } from '@baton/authority-transfer/internal/transfer-errors.js';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { SimCluster } from './sim-cluster.js';

// The target's replica is lost after the driver's last probe read it at the final serials and
// before the commit applies: the commit moves the home to a member that no longer holds the
// source's acknowledged writes. The new home must refuse writes under the new epoch until it
// caught up again from the source's feed, across its own restart, and then accept them.

async function movedAfterDiskLoss() {
  const clock = new VirtualClock();
  const cluster = new SimCluster(clock, new SeededRng(7), 60_000);
  await cluster.open();
  const east = cluster.members.get('east-1')!;
  const north = cluster.members.get('north-1')!;
  const west = cluster.members.get('west-1')!;
  await cluster.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  const acknowledged = [];
  for (let i = 0; i < 5; i++) acknowledged.push(await east.fence.write('proj', 1, `op${i}`));
  await north.pull(east);
  let wiped = 0;
  cluster.beforePropose = async (command) => {
    if (command.type !== 'commit_planned_transfer' || wiped > 0) return;
    // The probe that readied the plan read north at 5; now north loses its disk.
    wiped += 1;
    await north.crashAndRestart({ loseDisk: true });
  };
  let outcome: { ok: true; record: AuditRecord } | { ok: false; error: unknown } | undefined;
  west.engine
    .start({ id: 'k-disk', authority: 'proj', source: 'east', target: 'north', actor: 'olivia', reason: 'drain east' })
    .then((record) => (outcome = { ok: true, record }), (error: unknown) => (outcome = { ok: false, error }));
  for (let i = 0; i < 200 && outcome === undefined; i++) await clock.advanceAsync(50);
  return { clock, cluster, east, north, west, acknowledged, wiped: () => wiped, outcome };
}

test('a target that lost its replica after the last probe becomes home but refuses writes under the new epoch until it caught up again', async (t) => {
  const { cluster, east, north, acknowledged, wiped, outcome } = await movedAfterDiskLoss();
  t.is(wiped(), 1, 'the replica was lost between the last probe and the commit');
  t.like(outcome, { ok: true, record: { target: 'north', epoch: 2, barrier: 5 } });
  t.like(cluster.log.view().state.authorities.get('proj'), { home: 'north', epoch: 2 });
  t.is(north.holds(east.feed.origin()), 0, 'the new home holds none of the source writes');

  const refused = t.throws(() => north.fence.admit('proj', 2), { instanceOf: HomeCatchingUpError });
  t.like(refused, { status: 503, code: 'home_catching_up', authority: 'proj', epoch: 2, source: 'east-1', barrier: 5, frontier: 0 });
  t.is(north.feed.serial(), 0, 'the refused write got no serial');

  // Catching up only part of the way is not enough.
  await north.pull(east, 2);
  t.is(north.holds(east.feed.origin()), 3);
  await t.throwsAsync(north.fence.write('proj', 2, 'still short'), { instanceOf: HomeCatchingUpError });

  await north.pull(east);
  const accepted = await north.fence.write('proj', 2, 'after catching up');
  t.like(accepted, { epoch: 2, serial: 1 });
  for (const write of acknowledged) {
    t.true(north.holds(east.feed.origin()) >= write.serial, `the write east acknowledged at ${write.serial} is at the new home`);
  }
});

test('the new home refuses across its own restart while short, and once it held the finals settles them: a later new incarnation of the source feed does not block it', async (t) => {
  const { clock, cluster, east, north, outcome } = await movedAfterDiskLoss();
  t.like(outcome, { ok: true });
  // The requirement and the replica both outlive the process.
  await north.crashAndRestart();
  t.throws(() => north.fence.admit('proj', 2), { instanceOf: HomeCatchingUpError });
  await north.pull(east);
  await north.fence.write('proj', 2, 'caught up');
  for (let i = 0; i < 20 && !cluster.log.view().state.authorities.get('proj')!.catchUp!.settled.includes('north-1'); i++) await clock.advanceAsync(10);
  t.deepEqual(cluster.log.view().state.authorities.get('proj')!.catchUp!.settled, ['north-1'], 'the home said it holds the finals');

  // The former home loses its disk: its feed starts over, and north's replica follows it to 0.
  await east.crashAndRestart({ loseDisk: true });
  await north.pull(east);
  t.is(north.holds({ member: 'east-1', incarnation: cluster.log.view().state.authorities.get('proj')!.catchUp!.finals[0].incarnation }), 0);
  await north.crashAndRestart();
  t.like(await north.fence.write('proj', 2, 'after the source lost its feed'), { epoch: 2 });
});

test('a new home restarted before it settled settles once it holds the finals, with no write: its source losing its feed afterwards does not block it', async (t) => {
  const { clock, cluster, east, north, outcome } = await movedAfterDiskLoss();
  t.like(outcome, { ok: true });
  const proj = () => cluster.log.view().state.authorities.get('proj')!;
  t.true(cluster.log.view().state.unsettledByHome.get('north')?.has('proj'), 'the move is listed as unsettled under its new home');
  // north restarts short of the final: it forgets the move it was following.
  await north.crashAndRestart();
  t.is(north.catchUp.catchingUp, 1, 'after the restart it knows it is short, from the index alone');
  t.like(north.catchUp.shortfalls()[0], { authority: 'proj', epoch: 2, source: 'east-1', final: 5, held: 0 });
  // It catches up from the source's feed; no write reaches it.
  await north.pull(east);
  for (let i = 0; i < 40 && !proj().catchUp!.settled.includes('north-1'); i++) await clock.advanceAsync(100);
  t.deepEqual(proj().catchUp!.settled, ['north-1'], 'settled with no write since the restart');
  t.is(north.catchUp.catchingUp, 0);
  t.false(cluster.log.view().state.unsettledByHome.has('north'), 'every member of north settled: the move leaves the index');

  // East loses its disk before any write reaches north: north's replica follows it to 0.
  await east.crashAndRestart({ loseDisk: true });
  await north.pull(east);
  t.is(north.replicas.applied('east-1').serial, 0);
  t.like(await north.fence.write('proj', 2, 'first write after the restart'), { epoch: 2 });
});

test('a new home that holds the finals settles them without waiting for a write: its source losing its feed later does not block the first write', async (t) => {
  const clock = new VirtualClock();
  const cluster = new SimCluster(clock, new SeededRng(11), 60_000);
  await cluster.open();
  const east = cluster.members.get('east-1')!;
  const north = cluster.members.get('north-1')!;
  await cluster.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  for (let i = 0; i < 3; i++) await east.fence.write('proj', 1, `op${i}`);
  await north.pull(east);
  let done = false;
  void east.engine
    .start({ id: 'k-quiet', authority: 'proj', source: 'east', target: 'north', actor: 'olivia', reason: 'drain east' })
    .finally(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await clock.advanceAsync(50);
  const settled = () => cluster.log.view().state.authorities.get('proj')?.catchUp?.settled ?? [];
  for (let i = 0; i < 20 && !settled().includes('north-1'); i++) await clock.advanceAsync(100);
  t.like(cluster.log.view().state.authorities.get('proj'), { home: 'north', epoch: 2 });
  t.deepEqual(settled(), ['north-1'], 'settled with no write at north');

  // East loses its disk before any write reaches north: north's replica follows it to 0.
  await east.crashAndRestart({ loseDisk: true });
  await north.pull(east);
  t.is(north.replicas.applied('east-1').serial, 0);
  t.like(await north.fence.write('proj', 2, 'first write at the new home'), { epoch: 2 });
});
