import test from 'ava';
import { Redis } from 'ioredis';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { auditRecord } from '@baton/conformance/internal/audit-store-suite.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { eventually, openStore, timed } from './redis-fixture.js';

/** Well above commandTimeoutMs (1 s in the fixture): "promptly" means "not hanging", not fast. */
const PROMPTLY_MS = 5_000;

test('a stopped Redis fails every operation promptly; after a restart the same store works', async (t) => {
  const server = await RedisServer.start();
  t.teardown(() => server.close());
  const { store, cleanup } = await openStore(server);
  t.teardown(cleanup);
  await store.put(auditRecord());

  await server.stop();
  for (const [what, operation] of [
    ['put', () => store.put(auditRecord({ id: 'during', commit_index: 1 }))],
    ['byId', () => store.byId('5f0c-drain-proj')],
    ['latest', () => store.latest('proj')],
    ['list', () => store.list('proj')],
  ] as [string, () => Promise<unknown>][]) {
    const { ms, result } = await timed(operation());
    t.is(result.status, 'rejected', what);
    t.true((result as PromiseRejectedResult).reason instanceof StoreUnavailableError, what);
    t.true(ms < PROMPTLY_MS, `${what} took ${ms} ms to fail`);
  }

  await server.restart();
  const created = await eventually(() =>
    store.put(auditRecord({ id: 'after', commit_index: 9100 })),
  );
  t.deepEqual(created, { created: true });
  t.deepEqual(
    (await store.list('proj')).map((r) => r.id),
    ['after', '5f0c-drain-proj'],
    'what was acknowledged before the outage survived it',
  );
});

test('a command in flight when Redis stops answering fails after commandTimeoutMs', async (t) => {
  const server = await RedisServer.start();
  t.teardown(() => server.close());
  const { store, cleanup } = await openStore(server, { commandTimeoutMs: 300 });
  t.teardown(cleanup);
  const admin = new Redis(server.url);
  t.teardown(() => admin.disconnect());
  await admin.client('PAUSE', 3_000, 'ALL');
  const { ms, result } = await timed(store.put(auditRecord()));
  t.is(result.status, 'rejected');
  const error = (result as PromiseRejectedResult).reason;
  t.true(error instanceof StoreUnavailableError, String(error));
  t.regex(error.message, /did not answer within commandTimeoutMs/);
  t.true(ms < PROMPTLY_MS, `took ${ms} ms`);
  await admin.client('UNPAUSE');
});

test('a replica answering READONLY is StoreUnavailableError; reads still work there', async (t) => {
  // No delay before the first full sync (Redis waits 5 s by default, hoping for more replicas).
  const primary = await RedisServer.start({ extraArgs: ['--repl-diskless-sync-delay', '0'] });
  t.teardown(() => primary.close());
  const replica = await RedisServer.start({
    extraArgs: ['--replicaof', primary.host, String(primary.port)],
  });
  t.teardown(() => replica.close());
  const onPrimary = await openStore(primary, { keyPrefix: 'replicated:' });
  t.teardown(onPrimary.cleanup);
  await onPrimary.store.put(auditRecord());
  const onReplica = await openStore(replica, { keyPrefix: 'replicated:' });
  t.teardown(onReplica.cleanup);

  const read = await eventually(async () => {
    const record = await onReplica.store.byId('5f0c-drain-proj');
    if (!record) throw new Error('not replicated yet');
    return record;
  });
  t.deepEqual(read, auditRecord());
  const error = await t.throwsAsync(
    onReplica.store.put(auditRecord({ id: 'on-replica', commit_index: 1 })),
    {
      instanceOf: StoreUnavailableError,
    },
  );
  t.regex(error!.message, /READONLY/);
});

test('writes cut by a crash leave each record whole or absent, and keep every acknowledged one', async (t) => {
  const server = await RedisServer.start();
  t.teardown(() => server.close());
  const { store, cleanup } = await openStore(server);
  t.teardown(cleanup);
  const records: AuditRecord[] = Array.from({ length: 400 }, (_, i) =>
    auditRecord({ id: `t-${i}`, authority: `a-${i % 5}`, commit_index: i, epoch: i }),
  );
  const acknowledged = new Set<string>();
  const failed = new Set<string>();
  // Sixteen writers keep puts in flight; the server is killed once 100 were acknowledged, so
  // some puts are cut on the wire and the rest are refused while it is down.
  let next = 0;
  let killed: Promise<void> | undefined;
  const writer = async () => {
    while (next < records.length) {
      const record = records[next++];
      try {
        await store.put(record);
        acknowledged.add(record.id);
        if (acknowledged.size === 100) killed = server.stop('SIGKILL');
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        failed.add(record.id);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, writer));
  await killed;
  t.true(killed !== undefined, 'the crash happened mid-run');
  t.true(failed.size > 0, 'the crash interrupted some writes');

  await server.restart();
  await eventually(() => store.latest('a-0'));
  const raw = new Redis(server.url);
  t.teardown(() => raw.disconnect());
  for (const record of records) {
    const byId = await store.byId(record.id);
    const inHistory = (await store.list(record.authority, { limit: 1_000 })).filter(
      (r) => r.id === record.id,
    );
    if (byId) {
      t.deepEqual(byId, record, `${record.id} is whole`);
      t.deepEqual(inHistory, [record], `${record.id} is in its authority's history too`);
    } else {
      t.deepEqual(inHistory, [], `${record.id} is absent from both indexes`);
      t.false(acknowledged.has(record.id), `${record.id} was acknowledged, then lost`);
    }
  }
});
