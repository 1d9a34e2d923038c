import test from 'ava';
import { Etcd3 } from 'etcd3';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { EntryLedger } from './entry-ledger.js';
import { eventually, startGroup } from './etcd-fixture.js';

async function revisionOf(client: Etcd3): Promise<number> {
  return Number((await client.get('group-commit-probe').exec()).header.revision);
}

test('proposals waiting on one member go to etcd together: 200 of them take a few transactions, each at its own position, in order on every member', async (t) => {
  const cluster = await EtcdCluster.start({ size: 1 });
  t.teardown(() => cluster.close());
  const group = await startGroup(cluster, 3);
  t.teardown(() => group.stop());
  const client = new Etcd3({ hosts: cluster.endpoints });
  t.teardown(() => client.close());
  const ledgers = group.members.map((member) => new EntryLedger(member));
  const [member] = group.members;

  const before = await revisionOf(client);
  const receipts = await Promise.all(
    Array.from({ length: 200 }, (_, n) =>
      member.propose({ op: 'put', key: `k${n % 7}`, value: `v${n}` }, n % 2 === 0 ? { idempotencyKey: `key-${n}` } : {}),
    ),
  );
  const transactions = (await revisionOf(client)) - before;

  const indexes = receipts.map((r) => r.position.index);
  t.is(new Set(indexes).size, 200, 'every proposal has a position of its own');
  t.true(transactions < 50, `200 proposals took ${transactions} etcd transactions`);
  t.log(`200 concurrent proposals at one member: ${transactions} etcd transactions`);
  await eventually(() => ledgers.every((l) => l.entries.length >= 200), 'every member applies all 200');
  for (const [i, ledger] of ledgers.entries()) {
    t.true(ledger.inOrder(), `member ${i} applied the log in order`);
    t.deepEqual(ledger.values(), ledgers[0].values(), `member ${i} applied the same log as member 0`);
  }
  // Queue order is log order: a member's proposals commit in the order they were made.
  const sorted = [...receipts].sort((a, b) => a.position.index - b.position.index);
  t.deepEqual(sorted.map((r) => r.result), receipts.map((r) => r.result));
});

test('a retry under a key proposed in the same burst joins the first decision instead of sharing its transaction', async (t) => {
  const cluster = await EtcdCluster.start({ size: 1 });
  t.teardown(() => cluster.close());
  const group = await startGroup(cluster, 1);
  t.teardown(() => group.stop());
  const [member] = group.members;
  const command = { op: 'put' as const, key: 'k', value: 'once' };
  const answers = await Promise.all([
    ...Array.from({ length: 10 }, (_, n) => member.propose({ op: 'put', key: `other${n}`, value: 'x' })),
    member.propose(command, { idempotencyKey: 'same' }),
    member.propose(command, { idempotencyKey: 'same' }),
    member.propose(command, { idempotencyKey: 'same' }),
  ]);
  const keyed = answers.slice(10);
  t.deepEqual(new Set(keyed.map((r) => r.position.index)).size, 1, 'one decision for the key');
  t.is(member.view().state.commandsApplied, 11, 'the keyed command applied once');
});

test('a batch larger than etcd takes is split, not stalled: every proposal commits', async (t) => {
  // etcd here takes requests up to 40 KiB: four 16 KiB entries fit the plugin's batch bound, not etcd's.
  const cluster = await EtcdCluster.start({ size: 1, extraArgs: ['--max-request-bytes=40960'] });
  t.teardown(() => cluster.close());
  const group = await startGroup(cluster, 1);
  t.teardown(() => group.stop());
  const [member] = group.members;
  const big = 'x'.repeat(16 * 1024);
  const receipts = await Promise.all(
    Array.from({ length: 8 }, (_, n) => member.propose({ op: 'put', key: `big${n}`, value: `${n}${big}` })),
  );
  t.is(new Set(receipts.map((r) => r.position.index)).size, 8);
  t.is(member.view().state.commandsApplied, 8);
});
