import test, { type ExecutionContext } from 'ava';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { ScriptedFrontierProbe } from '../../framework/authority-transfer/scripted-frontier-probe.js';
import { EtcdAuthorityNodes, watchEpochs } from './etcd-authority-nodes.js';
import { call } from './http-call.js';
import { etcdClustersForFile } from '../etcd-clusters.js';
import { etcdLeaderIndex } from '../etcd-leader.js';
import { eventually } from '../eventually.js';
import { ADMIN, WRITER, transfer } from './node-harness.js';

// One etcd per fault: a 3-member cluster that loses its leader, a single node that restarts.
const etcd = etcdClustersForFile({ three: 3, single: 1 });

/** A status a planned transfer may end with while etcd is degraded, each with its typed code. */
const TYPED = new Set([409, 503, 504]);

/**
 * A planned transfer east -> west, held in catch-up (a scripted probe reads west as unreachable)
 * until `fault` has hit etcd, then released so its commit runs through the fault; `recover`
 * runs once the first attempt answered. That answer is a commit or a typed refusal (`typed`:
 * it must be the refusal); retrying with the same Idempotency-Key settles on one
 * committed move. Then: the move is in the etcd log once, every member stores its audit, the
 * acknowledged writes and ownership are intact, and no epoch ever went backwards.
 */
async function transferThroughFault(
  t: ExecutionContext,
  etcd: EtcdCluster,
  fault: () => Promise<void>,
  recover: () => Promise<void>,
  expectFirst: 'any' | 'typed',
): Promise<void> {
  const probe = new ScriptedFrontierProbe(new SystemClock());
  const group = await EtcdAuthorityNodes.start(etcd.endpoints, { dcs: ['east', 'west'], probe });
  t.teardown(() => group.stop());
  const epochs = watchEpochs(group.members);
  t.teardown(() => epochs.stop());
  const [east, west] = [group.member('east'), group.member('west')];
  const control = east.node.controlAddress.url;

  const established = await call(control, 'POST', '/availability/v1/commands', {
    token: ADMIN,
    key: 'est-proj',
    body: { type: 'transfer_authority', authority: 'proj', target: 'east' },
  });
  t.is(established.status, 200, JSON.stringify(established.body));
  for (let i = 1; i <= 2; i++) {
    const write = await call(
      east.node.publicAddress.url,
      'POST',
      '/availability/v1/authorities/proj/writes',
      {
        token: WRITER,
        body: { operation: `op${i}`, epoch: 1 },
      },
    );
    t.is(write.status, 200, JSON.stringify(write.body));
  }

  probe.unreachable('west');
  const post = () =>
    call(control, 'POST', '/availability/v1/transfers', {
      token: ADMIN,
      key: 'move-f',
      body: transfer,
    });
  const first = post();
  await probe.whenProbed(1);
  await fault();
  probe.answer('west', 2);
  const answer = await first;
  t.log(`first answer through the fault: ${answer.status} ${answer.body.code ?? ''}`);
  if (answer.status !== 200) {
    t.true(
      TYPED.has(answer.status),
      `a typed answer, not ${answer.status}: ${JSON.stringify(answer.body)}`,
    );
    t.is(typeof answer.body.code, 'string', 'the answer names its code');
  }
  if (expectFirst === 'typed')
    t.not(answer.status, 200, 'with etcd down the whole time nothing can commit');
  await recover();

  // Retried with the same key, the transfer settles on one committed move.
  let settled = answer;
  await eventually(
    async () => {
      if (settled.status === 200) return true;
      settled = await post();
      if (settled.status !== 200)
        t.true(
          TYPED.has(settled.status),
          `a retry answered ${settled.status}: ${JSON.stringify(settled.body)}`,
        );
      return settled.status === 200;
    },
    'a retry with the same key to settle the transfer',
    60_000,
  );
  t.like(settled.body, {
    id: 'move-f',
    authority: 'proj',
    source: 'east',
    target: 'west',
    barrier: 2,
    epoch: 2,
  });

  const commits = await group.committedEntries(
    (c) => c.type === 'commit_planned_transfer' && c.id === 'move-f',
  );
  t.is(commits.length, 1, 'the move is in the etcd log once');
  t.is(settled.body.commit_index, commits[0].revision, 'sealed at the etcd revision of that entry');
  await eventually(
    () => group.members.every((m) => m.consensus.view().state.pending.size === 0),
    'every voter to store and acknowledge the audit',
    30_000,
  );
  for (const m of group.members) {
    t.deepEqual(await m.audit.byId('move-f'), settled.body, `${m.id} stored the audit`);
    t.deepEqual(
      Object.fromEntries([...m.consensus.view().state.authorities].map(([authority, { home, epoch }]) => [authority, { home, epoch }])),
      { proj: { home: 'west', epoch: 2 } },
      `${m.id} sees west at epoch 2`,
    );
  }
  // Nothing acknowledged was lost: the writes are in the source's feed and the target's replica.
  t.is(east.node.feed.serial(), 2);
  t.true(west.node.replicas.appliedSerial(east.node.feed.origin()) >= 2);
  const onWest = await call(
    west.node.publicAddress.url,
    'POST',
    '/availability/v1/authorities/proj/writes',
    {
      token: WRITER,
      body: { operation: 'op3', epoch: 2 },
    },
  );
  t.is(onWest.status, 200, 'the new home takes writes at the new epoch');
  t.deepEqual(epochs.problems, [], 'no member saw an epoch go backwards');
}

test('killing the etcd leader of three mid-transfer: the transfer settles under its key, once, nothing lost', async (t) => {
  let killed = -1;
  await transferThroughFault(
    t,
    etcd.three,
    async () => {
      killed = await etcdLeaderIndex(etcd.three.endpoints);
      await etcd.three.member(killed).kill();
    },
    async () => undefined,
    'any',
  );
  t.false(
    etcd.three.member(killed).running,
    'the transfer settled with one etcd member of three down',
  );
});

test('restarting the only etcd member mid-transfer: the transfer settles under its key, once, nothing lost', async (t) => {
  await transferThroughFault(
    t,
    etcd.single,
    () => etcd.single.member(0).kill(),
    // Back only once the first attempt answered: that answer is the typed one, and the
    // transfer is left to its key across the restart.
    () => etcd.single.member(0).start(),
    'typed',
  );
  t.true(etcd.single.member(0).running);
});
