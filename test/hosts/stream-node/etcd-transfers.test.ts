import test, { type ExecutionContext } from 'ava';
import { etcdClustersForFile } from '../etcd-clusters.js';
import { eventually } from '../eventually.js';
import { EtcdStreamNodes, readAll } from './etcd-stream-nodes.js';

// One etcd of each shape for the whole file: a single node and a 3-member cluster.
const clusters = etcdClustersForFile({ single: 1, cluster: 3 });

/**
 * Three stream nodes on etcd: create, append, transfer, append on the new owner, then drain that
 * owner; every record stays readable, and every node's metadata agrees.
 */
async function transferAndDrain(t: ExecutionContext, shape: 'single' | 'cluster'): Promise<void> {
  const group = await EtcdStreamNodes.start(clusters[shape].endpoints, ['n1', 'n2', 'n3']);
  t.teardown(() => group.stop());
  for (const n of group.nodes.values())
    t.is(n.consensus.self, n.id, `${n.id}: the etcd member id defaults to the node id`);
  const client = group.client();
  await eventually(
    async () => (await client.nodes()).nodes.length === 3,
    'all three nodes registered through etcd',
  );

  await client.createStream('s', 'n1');
  await client.createStream('t', 'n2');
  await eventually(
    () => group.get('n1').node.node.session('s')?.writable === true,
    's pre-warmed on n1',
  );
  await eventually(
    () => group.get('n2').node.node.session('t')?.writable === true,
    't pre-warmed on n2',
  );
  t.like(await client.append('s', ['s1', 's2']), { node: 'n1', epoch: 1, first: 0 });
  t.like(await client.append('t', ['t1']), { node: 'n2', epoch: 1, first: 0 });

  await client.transfer('s', 'n2');
  await eventually(
    async () => (await client.transferStatus('s')).status === 'settled',
    'the handoff of s to n2',
  );
  t.like(await client.append('s', ['s3']), { node: 'n2', epoch: 2, first: 2 });

  // Drain n2: both streams it owns leave it, and it is safe to take down.
  await client.drain('n2');
  await eventually(async () => (await client.node('n2')).drained, 'n2 drained');
  const after = await client.nodes();
  t.like(
    after.nodes.find((n) => n.id === 'n2'),
    { draining: true, owned: 0 },
  );
  for (const stream of ['s', 't']) {
    const described = await client.describe(stream);
    t.not(described.owner, 'n2', `${stream} left the drained node`);
    t.true(
      (described.epoch as number) > (stream === 's' ? 2 : 1),
      `${stream} reopened at a later epoch`,
    );
  }
  const s4 = await client.append('s', ['s4']);
  const t2 = await client.append('t', ['t2']);
  t.not(s4.node, 'n2');
  t.not(t2.node, 'n2');

  t.deepEqual(
    await readAll(client, 's'),
    ['s1', 's2', 's3', 's4'],
    'every record of s, across two moves',
  );
  t.deepEqual(await readAll(client, 't'), ['t1', 't2'], 'every record of t, across the drain');

  // Every node applied the same log from etcd.
  const leader = group.get('n1').consensus;
  await eventually(
    () => [...group.nodes.values()].every((n) => n.consensus.appliedSeq === leader.appliedSeq),
    'every node applied the whole log',
  );
  const states = [...group.nodes.values()].map((n) => n.consensus.view().state);
  for (const state of states.slice(1)) t.deepEqual(state, states[0]);
  t.deepEqual(Object.keys(states[0].transfers), [], 'no transfer left pending');
}

test('stream nodes on a single etcd node: transfer, append on the new owner, drain; all records readable', (t) =>
  transferAndDrain(t, 'single'));

test('stream nodes on a 3-member etcd cluster: transfer, append on the new owner, drain; all records readable', (t) =>
  transferAndDrain(t, 'cluster'));
