import test from 'ava';
import { Redis } from 'ioredis';
import { auditRecord } from '@baton/conformance/internal/audit-store-suite.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { eventually, makeStore } from './redis-fixture.js';

test('through Sentinel the store finds the master, and after a failover it writes to the new one', async (t) => {
  // No delay before the replica's first sync, so the failover has a replica to promote.
  const primary = await RedisServer.start({ extraArgs: ['--repl-diskless-sync-delay', '0'] });
  t.teardown(() => primary.close());
  const replica = await RedisServer.start({
    extraArgs: ['--replicaof', primary.host, String(primary.port)],
  });
  t.teardown(() => replica.close());
  const sentinel = await RedisServer.start({
    sentinelFor: { name: 'audit', host: primary.host, port: primary.port },
  });
  t.teardown(() => sentinel.close());

  const store = makeStore(primary, {
    url: undefined,
    sentinels: [{ host: sentinel.host, port: sentinel.port }],
    name: 'audit',
  });
  await store.start();
  t.teardown(() => store.stop());
  t.deepEqual(await store.put(auditRecord()), { created: true });

  const onReplica = new Redis(replica.url);
  t.teardown(() => onReplica.disconnect());
  const askSentinel = new Redis(sentinel.url);
  t.teardown(() => askSentinel.disconnect());
  await eventually(async () => {
    if ((await onReplica.dbsize()) === 0) throw new Error('not replicated yet');
    const replicas = (await askSentinel.call('SENTINEL', 'REPLICAS', 'audit')) as string[][];
    if (!replicas.some((fields) => fields.includes(String(replica.port))))
      throw new Error('sentinel does not know the replica yet');
  }, 20_000);

  await primary.stop('SIGKILL');
  const created = await eventually(
    () => store.put(auditRecord({ id: 'after-failover', commit_index: 9100 })),
    30_000,
  );
  t.deepEqual(created, { created: true });
  const master = (await askSentinel.call(
    'SENTINEL',
    'GET-MASTER-ADDR-BY-NAME',
    'audit',
  )) as string[];
  t.is(Number(master[1]), replica.port, 'the replica was promoted');
  t.deepEqual(
    (await store.list('proj')).map((r) => r.id),
    ['after-failover', '5f0c-drain-proj'],
    'the record written before the failover is on the new master',
  );
});
