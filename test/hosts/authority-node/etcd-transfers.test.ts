import test, { type ExecutionContext } from 'ava';
import { etcdClustersForFile } from '../etcd-clusters.js';
import { eventually } from '../eventually.js';
import { EtcdAuthorityNodes, watchEpochs } from './etcd-authority-nodes.js';
import { call } from './http-call.js';
import { ADMIN, READER, WRITER, transfer } from './node-harness.js';

// One etcd of each shape for the whole file: a single node and a 3-member cluster.
const clusters = etcdClustersForFile({ single: 1, cluster: 3 });

/**
 * Three datacenters whose ownership consensus is one log in etcd, plus a fourth ("south") in the
 * roster whose member never runs: a planned transfer commits behind the real catch-up barrier
 * with its audit sealed at the etcd position of its log entry; a transfer to the unreachable
 * south waits and is cancelled; the raw command fails an authority away from the dead south,
 * and its key replays through another member.
 */
async function transfersOnEtcd(t: ExecutionContext, shape: 'single' | 'cluster'): Promise<void> {
  const group = await EtcdAuthorityNodes.start(clusters[shape].endpoints, {
    dcs: ['east', 'west', 'north'],
    absent: ['south'],
    tracker: { suspectAfterMs: 1_500, deadAfterMs: 3_000 },
  });
  t.teardown(() => group.stop());
  const epochs = watchEpochs(group.members);
  t.teardown(() => epochs.stop());
  const [east, west] = [group.member('east'), group.member('west')];
  for (const m of group.members)
    t.is(
      m.consensus.leadership().self,
      m.id,
      `${m.id}: the etcd member id defaults to the node id`,
    );
  const control = (m = east) => m.node.controlAddress.url;
  const establish = async (authority: string, home: string) => {
    const res = await call(control(), 'POST', '/availability/v1/commands', {
      token: ADMIN,
      key: `est-${authority}`,
      body: { type: 'transfer_authority', authority, target: home },
    });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.like(res.body, { home, epoch: 1 });
  };

  // ---- a planned transfer, behind the real barrier ----
  await establish('proj', 'east');
  for (let i = 1; i <= 3; i++) {
    const write = await call(
      east.node.publicAddress.url,
      'POST',
      '/availability/v1/authorities/proj/writes',
      { token: WRITER, body: { operation: `op${i}`, epoch: 1 } },
    );
    t.is(write.status, 200, JSON.stringify(write.body));
  }
  const moved = await call(control(), 'POST', '/availability/v1/transfers', {
    token: ADMIN,
    key: 'move-1',
    body: transfer,
  });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.like(moved.body, {
    id: 'move-1',
    authority: 'proj',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    barrier: 3,
    epoch: 2,
  });
  t.true(
    west.node.replicas.appliedSerial(east.node.feed.origin()) >= 3,
    'west had applied the barrier',
  );
  const entry = await group.committedEntry(
    (c) => c.type === 'commit_planned_transfer' && c.id === 'move-1',
  );
  t.truthy(entry, 'the commit is a log entry in etcd');
  t.is(
    moved.body.commit_index,
    entry!.revision,
    'commit_index is the etcd revision of the log entry',
  );
  t.is(moved.body.commit_term, entry!.term, 'commit_term is the leadership term the entry carries');
  t.true(entry!.term > 0);
  await eventually(
    () => group.members.every((m) => m.consensus.view().state.pending.size === 0),
    'every voter to store and acknowledge the audit',
  );
  for (const m of group.members)
    t.deepEqual(await m.audit.byId('move-1'), moved.body, `${m.id} stored the sealed audit`);
  const replay = await call(control(), 'POST', '/availability/v1/transfers', {
    token: ADMIN,
    key: 'move-1',
    body: transfer,
  });
  t.is(replay.status, 200);
  t.deepEqual(replay.body, moved.body, 'the same key answers the same committed move');
  const committed = await call(control(), 'DELETE', '/availability/v1/transfers/proj', {
    token: ADMIN,
  });
  t.is(committed.status, 409, 'a cancel after the commit is refused');
  t.is(committed.body.code, 'transfer_committed');

  // ---- cancel: a target that never catches up waits until the operator calls it off ----
  await establish('other', 'east');
  const toSouth = { authority: 'other', source: 'east', target: 'south', reason: 'drain east' };
  const waiting = call(control(), 'POST', '/availability/v1/transfers', {
    token: ADMIN,
    key: 'move-2',
    body: toSouth,
  });
  await eventually(
    async () =>
      (await call(control(), 'GET', '/availability/v1/transfers/other', { token: READER })).body
        .state === 'AwaitingCatchUp',
    'the transfer to south to wait for catch-up',
  );
  t.is(
    (await call(control(), 'DELETE', '/availability/v1/transfers/other', { token: ADMIN })).status,
    204,
  );
  const cancelled = await waiting;
  t.is(cancelled.status, 409);
  t.is(cancelled.body.code, 'transfer_cancelled');
  for (const m of group.members)
    t.is(await m.audit.byId('move-2'), undefined, `${m.id} has no audit of the cancelled move`);

  // ---- the raw transfer_authority command: a failover away from the dead south ----
  await establish('failed', 'south');
  await eventually(
    () => east.node.tracker.datacenterState('south') === 'Dead',
    'east to call south Dead',
  );
  const failover = {
    type: 'transfer_authority',
    authority: 'failed',
    source: 'south',
    target: 'north',
  };
  const raw = await call(control(), 'POST', '/availability/v1/commands', {
    token: ADMIN,
    key: 'fo-1',
    body: failover,
  });
  t.is(raw.status, 200, JSON.stringify(raw.body));
  t.like(raw.body, {
    id: 'fo-1',
    authority: 'failed',
    source: 'south',
    home: 'north',
    epoch: 2,
    replayed: false,
  });
  const rawEntry = await group.committedEntry(
    (c) => c.type === 'transfer_authority' && c.authority === 'failed' && c.target === 'north',
  );
  t.is(raw.body.commit_index, rawEntry?.revision, 'the raw move sits at its etcd revision');
  const again = await call(control(west), 'POST', '/availability/v1/commands', {
    token: ADMIN,
    key: 'fo-1',
    body: failover,
  });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.like(
    again.body,
    { home: 'north', epoch: 2, replayed: true, commit_index: raw.body.commit_index },
    'the key replays through another member',
  );

  // Every member applied the same log: the same homes and epochs everywhere.
  const head = Math.max(...group.members.map((m) => m.consensus.appliedSeq));
  await eventually(
    () => group.members.every((m) => m.consensus.appliedSeq >= head),
    'every member applied the whole log',
  );
  for (const m of group.members) {
    const homes = [...m.consensus.view().state.authorities].map(([authority, { home, epoch }]) => [authority, { home, epoch }]);
    t.deepEqual(Object.fromEntries(homes), {
      proj: { home: 'west', epoch: 2 },
      other: { home: 'east', epoch: 1 },
      failed: { home: 'north', epoch: 2 },
    });
  }
  t.deepEqual(epochs.problems, [], 'no member saw an epoch go backwards');
}

test('authority nodes on a single etcd node: planned transfer sealed at the etcd position, cancel, raw transfer_authority', (t) =>
  transfersOnEtcd(t, 'single'));

test('authority nodes on a 3-member etcd cluster: planned transfer sealed at the etcd position, cancel, raw transfer_authority', (t) =>
  transfersOnEtcd(t, 'cluster'));
