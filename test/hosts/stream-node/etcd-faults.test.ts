import test, { type ExecutionContext } from 'ava';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { StreamApiError } from '@baton/client';
import { etcdClustersForFile } from '../etcd-clusters.js';
import { etcdLeaderIndex } from '../etcd-leader.js';
import { eventually } from '../eventually.js';
import { EtcdStreamNodes, readAll } from './etcd-stream-nodes.js';

// One etcd per fault: a 3-member cluster that loses its leader, a single node that restarts.
const etcd = etcdClustersForFile({ three: 3, single: 1 });

const RECORDS = 24;

/**
 * Stream s moves n1 -> n2 while a producer keeps appending, each record under its own producer
 * seq and retried with that seq until acknowledged; `fault` hits etcd right after the transfer
 * was accepted. The handoff settles, every record is there exactly once and in order, the new
 * owner takes appends, and no node ever saw the stream's epoch go backwards.
 */
async function handoffThroughFault(
  t: ExecutionContext,
  etcd: EtcdCluster,
  fault: (group: EtcdStreamNodes) => Promise<void>,
): Promise<void> {
  const group = await EtcdStreamNodes.start(etcd.endpoints, ['n1', 'n2']);
  t.teardown(() => group.stop());
  const problems: string[] = [];
  for (const n of group.nodes.values()) {
    let seen = 0;
    const off = n.consensus.watch((view) => {
      const epoch = view.state.stream('s')?.epoch ?? 0;
      if (epoch < seen) problems.push(`${n.id}: s went from epoch ${seen} to ${epoch}`);
      seen = Math.max(seen, epoch);
    });
    t.teardown(off);
  }
  const client = group.client();
  await eventually(
    async () => (await client.nodes()).nodes.length === 2,
    'both nodes registered through etcd',
  );
  await client.createStream('s', 'n1');
  await eventually(
    () => group.get('n1').node.node.session('s')?.writable === true,
    's pre-warmed on n1',
  );

  let refusals = 0;
  const appendOnce = async (i: number) => {
    // A fresh client per attempt: the retry is a new request with the same producer seq.
    await eventually(
      async () => {
        try {
          await group.client().append('s', [`r${i}`], { id: 'producer', seq: i });
          return true;
        } catch (error) {
          if (!(error instanceof StreamApiError)) throw error;
          refusals += 1;
          return false;
        }
      },
      `record r${i} to be acknowledged`,
      90_000,
    );
  };
  for (let i = 0; i < RECORDS / 3; i++) await appendOnce(i);
  const writer = (async () => {
    for (let i = RECORDS / 3; i < RECORDS; i++) await appendOnce(i);
  })();

  await client.transfer('s', 'n2');
  await fault(group);
  await eventually(
    async () => (await group.client().transferStatus('s')).status === 'settled',
    'the handoff to settle',
    90_000,
  );
  await writer;
  t.log(`${refusals} append attempts were refused and retried with their seq`);

  const described = await group.client().describe('s');
  t.like(described, { owner: 'n2', epoch: 2 });
  const last = await group.client().append('s', ['after']);
  t.like(last, { node: 'n2', epoch: 2 });
  const expected = [...Array.from({ length: RECORDS }, (_, i) => `r${i}`), 'after'];
  t.deepEqual(
    await readAll(group.client(), 's'),
    expected,
    'every acknowledged record, once, in order',
  );
  t.deepEqual(problems, [], 'no node saw the epoch go backwards');
}

test('stream nodes on etcd: killing the etcd leader of three mid-handoff, the handoff settles and no record is lost', async (t) => {
  let killed = -1;
  await handoffThroughFault(t, etcd.three, async () => {
    killed = await etcdLeaderIndex(etcd.three.endpoints);
    await etcd.three.member(killed).kill();
  });
  t.false(etcd.three.member(killed).running, 'it settled with one etcd member of three down');
});

test('stream nodes on etcd: restarting the only etcd member mid-handoff, the handoff settles and no record is lost', async (t) => {
  await handoffThroughFault(t, etcd.single, async (group) => {
    await etcd.single.member(0).kill();
    // The source closes the stream for the handoff but cannot record the completion while etcd
    // is down: bring etcd back once it is there.
    await eventually(
      () => group.get('n1').node.node.session('s')?.writable !== true,
      'n1 to close s for the handoff',
      30_000,
    );
    await etcd.single.member(0).start();
  });
  t.true(etcd.single.member(0).running);
});
