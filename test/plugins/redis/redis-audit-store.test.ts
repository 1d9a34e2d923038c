import test from 'ava';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { AUDIT_STORE, InvalidAuditRecordError } from '@baton/contracts/internal/audit-store.js';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { LOGGER } from '@baton/contracts/internal/logger.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { auditRecord } from '@baton/conformance/internal/audit-store-suite.js';
import { freeLoopbackPort, RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { redisAuditStoreOptions } from '@baton/plugin-redis/internal/options.js';
import { redisAuditStorePlugin } from '@baton/plugin-redis/internal/plugin.js';
import { parseRedisUrl } from '@baton/plugin-redis/internal/redis-client.js';
import { makeStore, openStore, timed } from './redis-fixture.js';

let server: RedisServer;
test.before(async () => {
  server = await RedisServer.start();
});
test.after.always(async () => {
  await server?.close();
});

test('stores sharing one Redis under different prefixes never see each other', async (t) => {
  const east = await openStore(server, { keyPrefix: 'east:' });
  const west = await openStore(server, { keyPrefix: 'west:' });
  t.teardown(east.cleanup);
  t.teardown(west.cleanup);
  await east.store.put(auditRecord());
  t.deepEqual(
    await west.store.put(auditRecord({ epoch: 99 })),
    { created: true },
    'no conflict across prefixes',
  );
  t.is((await east.store.latest('proj'))?.epoch, 7);
  t.is((await west.store.latest('proj'))?.epoch, 99);
  t.deepEqual(await east.store.byId('5f0c-drain-proj'), auditRecord());
});

test('every key the store writes starts with its prefix', async (t) => {
  const own = await RedisServer.start();
  t.teardown(() => own.close());
  const { store, cleanup } = await openStore(own, { keyPrefix: 'only-here:' });
  t.teardown(cleanup);
  await store.put(auditRecord());
  await store.put(auditRecord({ id: 'x', authority: 'other', commit_index: 1 }));
  const raw = new Redis(own.url);
  t.teardown(() => raw.disconnect());
  t.deepEqual((await raw.keys('*')).sort(), [
    'only-here:audit:authority:other',
    'only-here:audit:authority:proj',
    'only-here:audit:by-id',
  ]);
});

test('an invalid record is refused with InvalidAuditRecordError and nothing is written', async (t) => {
  const { store, cleanup } = await openStore(server);
  t.teardown(cleanup);
  const bad = [
    auditRecord({ commit_index: -1 }),
    auditRecord({ commit_index: 1.5 }),
    auditRecord({ epoch: Number.NaN }),
    { ...auditRecord(), barrier: '12' as unknown as number },
    { ...auditRecord(), authority: undefined as unknown as string },
  ];
  for (const record of bad) {
    const error = await t.throwsAsync(store.put(record), { instanceOf: InvalidAuditRecordError });
    t.regex(error!.message, /not a valid audit record: .* must be/);
  }
  t.deepEqual(await store.list('proj'), []);
  t.is(await store.byId(auditRecord().id), undefined);
});

test('fields the contract does not know are not stored', async (t) => {
  const { store, cleanup } = await openStore(server);
  t.teardown(cleanup);
  await store.put({ ...auditRecord(), extra: 'ignored' } as ReturnType<typeof auditRecord>);
  t.deepEqual(await store.byId(auditRecord().id), auditRecord());
  t.deepEqual(
    await store.put(auditRecord()),
    { created: false },
    'the record without the extra field is the same',
  );
});

test('a foreign value under the prefix is StoreUnavailableError naming the prefix, not a guess', async (t) => {
  const { store, cleanup } = await openStore(server, { keyPrefix: 'shared-by-mistake:' });
  t.teardown(cleanup);
  const raw = new Redis(server.url);
  t.teardown(() => raw.disconnect());
  await raw.set('shared-by-mistake:audit:authority:proj', 'not a sorted set');
  await raw.hset('shared-by-mistake:audit:by-id', 'weird', '{"not":"a record"}');
  const put = await t.throwsAsync(store.put(auditRecord()), { instanceOf: StoreUnavailableError });
  t.regex(put!.message, /keyPrefix/);
  await t.throwsAsync(store.latest('proj'), { instanceOf: StoreUnavailableError });
  const read = await t.throwsAsync(store.byId('weird'), { instanceOf: StoreUnavailableError });
  t.regex(read!.message, /not an audit record/);
});

test('start fails with StoreUnavailableError naming the address when nothing listens', async (t) => {
  const port = await freeLoopbackPort();
  const store = makeStore(server, { url: `redis://127.0.0.1:${port}` });
  const { result } = await timed(store.start());
  t.is(result.status, 'rejected');
  const error = (result as PromiseRejectedResult).reason;
  t.true(error instanceof StoreUnavailableError, String(error));
  t.regex(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  t.regex(error.message, /ECONNREFUSED/);
  await store.stop();
});

test('the plugin builds the store from options and the host starts and stops it', async (t) => {
  const host = createHost()
    .value(LOGGER, createSilentLogger())
    .add(redisAuditStorePlugin, { host: server.host, port: server.port, keyPrefix: 'via-host:' })
    .build();
  await host.start();
  t.teardown(() => host.stop());
  const store = host.get(AUDIT_STORE);
  t.deepEqual(await store.put(auditRecord()), { created: true });
  t.deepEqual(await store.latest('proj'), auditRecord());
  await host.stop();
  await t.throwsAsync(
    store.latest('proj'),
    { instanceOf: StoreUnavailableError },
    'stopped means disconnected',
  );
});

test('invalid plugin options fail the build with the option path and what to do', (t) => {
  const build = (options: unknown) => () =>
    createHost()
      .value(LOGGER, createSilentLogger())
      .add(redisAuditStorePlugin, options, 'audit.options')
      .build();
  const noName = t.throws(build({ sentinels: [{ host: 'a', port: 26379 }] }), {
    instanceOf: WiringError,
  });
  t.regex(noName!.message, /audit\.options\.name: .*set "name"/);
  const badUrl = t.throws(build({ url: 'http://localhost:6379' }), { instanceOf: WiringError });
  t.regex(badUrl!.message, /audit\.options\.url: must start with redis:\/\//);
  const typo = t.throws(build({ prefix: 'x:' }), { instanceOf: WiringError });
  t.regex(typo!.message, /prefix/);
});

test('ACL users: the right password works, a wrong one fails start with advice', async (t) => {
  const acl = await RedisServer.start({
    // redis-server joins the words after --user into one ACL rule.
    extraArgs: ['--user', 'auditor', 'on', '>s3cret', '~*', '+@all', '--user', 'default', 'off'],
  });
  t.teardown(() => acl.close());
  const good = makeStore(acl, { username: 'auditor', password: 's3cret' });
  await good.start();
  t.teardown(() => good.stop());
  t.deepEqual(await good.put(auditRecord()), { created: true });

  const bad = makeStore(acl, { username: 'auditor', password: 'wrong' });
  const error = await t.throwsAsync(bad.start(), { instanceOf: StoreUnavailableError });
  t.regex(error!.message, /WRONGPASS|credentials|password/i);
  await bad.stop();
});

test('TLS: a store trusting the server certificate connects over rediss://', async (t) => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '../../../../test/plugins/redis/tls');
  const certFile = join(dir, 'server-cert.pem');
  const secure = await RedisServer.start({
    tls: { certFile, keyFile: join(dir, 'server-key.pem') },
  });
  t.teardown(() => secure.close());
  t.regex(secure.url, /^rediss:\/\//);
  const trusting = makeStore(secure, { tls: { ca: await readFile(certFile, 'utf8') } });
  await trusting.start();
  t.teardown(() => trusting.stop());
  t.deepEqual(await trusting.put(auditRecord()), { created: true });
  t.deepEqual(await trusting.byId('5f0c-drain-proj'), auditRecord());

  const untrusting = makeStore(secure);
  const error = await t.throwsAsync(untrusting.start(), { instanceOf: StoreUnavailableError });
  t.regex(error!.message, /certificate/i, 'the default trust store refuses a self-signed server');
  await untrusting.stop();
});

test('a list limit that is not a positive integer is refused, not guessed', async (t) => {
  const { store, cleanup } = await openStore(server);
  t.teardown(cleanup);
  for (const limit of [0, -1, 1.5, Number.NaN]) {
    await t.throwsAsync(store.list('proj', { limit }), {
      instanceOf: RangeError,
      message: /positive integer/,
    });
  }
});

test('the db option selects the Redis database, overriding the url', async (t) => {
  const inDb3 = await openStore(server, { url: `${server.url}/0`, db: 3, keyPrefix: 'by-db:' });
  t.teardown(inDb3.cleanup);
  const inDb0 = await openStore(server, { keyPrefix: 'by-db:' });
  t.teardown(inDb0.cleanup);
  await inDb3.store.put(auditRecord());
  t.is(await inDb0.store.byId('5f0c-drain-proj'), undefined, 'database 0 does not hold it');
  const raw = new Redis(server.url, { db: 3 });
  t.teardown(() => raw.disconnect());
  t.is(await raw.exists('by-db:audit:by-id'), 1, 'database 3 does');
});

test('a url gives host, port, credentials, database and tls; explicit fields win', (t) => {
  t.deepEqual(parseRedisUrl('rediss://auditor:p%40ss@redis.example:6380/4'), {
    host: 'redis.example',
    port: 6380,
    username: 'auditor',
    password: 'p@ss',
    db: 4,
    tls: {},
  });
  t.deepEqual(parseRedisUrl('redis://:secret@[::1]'), {
    host: '::1',
    port: 6379,
    password: 'secret',
  });
  const badPath = redisAuditStoreOptions.safeParse({ url: 'redis://host/not-a-db' });
  t.false(badPath.success);
  t.regex(JSON.stringify(badPath.error?.issues), /database number/);
});
