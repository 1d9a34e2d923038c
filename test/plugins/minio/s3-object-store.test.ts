import test from 'ava';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'minio';
import { CLOCK } from '@baton/contracts/internal/clock.js';
import { LOGGER } from '@baton/contracts/internal/logger.js';
import {
  InvalidKeyError,
  OBJECT_STORE,
  PreconditionFailedError,
} from '@baton/contracts/internal/object-store.js';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { RNG } from '@baton/contracts/internal/rng.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { S3Server, S3_TEST_CREDENTIALS } from '@baton/testing/internal/s3-server.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { s3ObjectStorePlugin } from '@baton/plugin-minio/internal/plugin.js';
import { S3ObjectStore } from '@baton/plugin-minio/internal/s3-object-store.js';
import { openS3Fixture, storeOptions } from './s3-fixture.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) =>
  b === undefined ? undefined : new TextDecoder().decode(b);

function rawClient(server: S3Server): Client {
  const url = new URL(server.endpoint);
  return new Client({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: false,
    ...S3_TEST_CREDENTIALS,
  });
}

test('bodies larger than partSize go up in parts and come back whole', async (t) => {
  const { store, server, cleanup } = await openS3Fixture({ partSize: 5 * 1024 * 1024 });
  t.teardown(cleanup);
  const body = new Uint8Array(11 * 1024 * 1024);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31 + (i >> 12)) & 0xff;
  const postsBefore = server.requests.get('POST') ?? 0;
  await store.put('big/segment', body);
  t.true(
    (server.requests.get('POST') ?? 0) > postsBefore,
    'a multipart upload was initiated and completed',
  );
  const back = await store.get('big/segment');
  t.is(back?.byteLength, body.byteLength);
  t.true(Buffer.from(back!).equals(Buffer.from(body)));
  t.deepEqual(await store.head('big/segment'), { key: 'big/segment', size: body.byteLength });
});

test('stores sharing a bucket under different keyPrefixes never see each other', async (t) => {
  const east = await openS3Fixture({ keyPrefix: 'east/' });
  t.teardown(east.cleanup);
  const options = storeOptions(east.server, {
    bucket: east.store['options'].bucket,
    keyPrefix: 'west/',
  });
  const west = new S3ObjectStore(
    options,
    new SystemClock(),
    new SeededRng(3),
    createSilentLogger(),
  );
  await west.start();
  t.teardown(() => west.stop());
  await east.store.put('k', utf8('east'));
  await west.put('k', utf8('west'));
  t.is(text(await east.store.get('k')), 'east');
  t.is(text(await west.get('k')), 'west');
  t.deepEqual((await east.store.list('')).objects, [{ key: 'k', size: 4 }]);
  await west.delete('k');
  t.is(text(await east.store.get('k')), 'east');
});

test('objects other tools put in the bucket are not keys of the store', async (t) => {
  const { store, server, cleanup } = await openS3Fixture();
  t.teardown(cleanup);
  await rawClient(server).putObject(
    store['options'].bucket,
    'hand made name.txt',
    Buffer.from('x'),
  );
  await store.put('mine', utf8('y'));
  t.deepEqual((await store.list('')).objects, [{ key: 'mine', size: 1 }]);
});

test('a missing bucket fails start with advice unless createBucket is set', async (t) => {
  const server = await S3Server.start();
  t.teardown(() => server.close());
  const store = new S3ObjectStore(
    storeOptions(server, { createBucket: false }),
    new SystemClock(),
    new SeededRng(1),
    createSilentLogger(),
  );
  t.teardown(() => store.stop());
  const error = await t.throwsAsync(store.start(), { instanceOf: StoreUnavailableError });
  t.regex(error!.message, /createBucket: true/);
});

test('a bucket removed under the store fails at once, without retries, naming the cause', async (t) => {
  const { store, server, cleanup } = await openS3Fixture();
  t.teardown(cleanup);
  await rawClient(server).removeBucket(store['options'].bucket);
  const before = server.requests.get('PUT') ?? 0;
  const error = await t.throwsAsync(store.put('k', utf8('x')), {
    instanceOf: StoreUnavailableError,
  });
  t.regex(error!.message, /bucket does not exist/);
  t.is((server.requests.get('PUT') ?? 0) - before, 1, 'a misconfiguration is not retried');
});

test('conditionalPut forced on a server that ignores it is the operator’s claim; auto detects', async (t) => {
  const auto = await openS3Fixture();
  t.teardown(auto.cleanup);
  t.false(auto.store.supports.conditionalPut, 'plain s3rver ignores If-None-Match');
  const honest = await openS3Fixture({}, { server: { conditionalPut: true } });
  t.teardown(honest.cleanup);
  t.true(honest.store.supports.conditionalPut, 'a server that honours it is detected');
  const off = await openS3Fixture({ conditionalPut: false }, { server: { conditionalPut: true } });
  t.teardown(off.cleanup);
  t.false(off.store.supports.conditionalPut, 'configured off stays off');
  t.deepEqual(
    (await off.store.list('')).objects,
    [],
    'no probe object is left behind (and none was written when not probing)',
  );
  t.deepEqual((await honest.store.list('')).objects, [], 'the probe was removed');
});

test('the plugin builds the store from options with the host clock, rng and logger', async (t) => {
  const server = await S3Server.start();
  t.teardown(() => server.close());
  const host = createHost()
    .value(CLOCK, new SystemClock())
    .value(RNG, new SeededRng(11))
    .value(LOGGER, createSilentLogger())
    .add(s3ObjectStorePlugin, {
      endpoint: server.endpoint,
      ...S3_TEST_CREDENTIALS,
      bucket: 'via-host',
      createBucket: true,
      serverSortsListings: false,
    })
    .build();
  await host.start();
  t.teardown(() => host.stop());
  const store = host.get(OBJECT_STORE);
  await store.put('a/b', utf8('hello'));
  t.is(text(await store.get('a/b')), 'hello');
  t.false(store.supports.conditionalPut);
  await t.throwsAsync(store.put('a/b', utf8('again'), { ifAbsent: true }), {
    message: /does not support/,
  });
  t.is(text(await store.get('a/b')), 'hello');
});

test('invalid plugin options fail the build naming the option and the rule', (t) => {
  const build = (options: Record<string, unknown>) => () =>
    createHost()
      .value(CLOCK, new SystemClock())
      .value(RNG, new SeededRng(1))
      .value(LOGGER, createSilentLogger())
      .add(
        s3ObjectStorePlugin,
        {
          endpoint: 'http://127.0.0.1:9000',
          ...S3_TEST_CREDENTIALS,
          bucket: 'ok-bucket',
          ...options,
        },
        'objects.options',
      )
      .build();
  t.regex(
    t.throws(build({ bucket: 'Bad_Bucket' }), { instanceOf: WiringError })!.message,
    /objects\.options\.bucket: must be 3-63/,
  );
  t.regex(
    t.throws(build({ partSize: 1024 }), { instanceOf: WiringError })!.message,
    /objects\.options\.partSize/,
  );
  t.regex(
    t.throws(build({ endpoint: 'ftp://x' }), { instanceOf: WiringError })!.message,
    /objects\.options\.endpoint/,
  );
  t.regex(
    t.throws(build({ keyPrefix: 'no-slash' }), { instanceOf: WiringError })!.message,
    /objects\.options\.keyPrefix/,
  );
});

test('a create-only put whose answer was lost succeeds on retry instead of reporting a conflict', async (t) => {
  const { store, server, cleanup } = await openS3Fixture({}, { server: { conditionalPut: true } });
  t.teardown(cleanup);
  server.failNext(1, { status: 500, afterHandling: true, method: 'PUT' });
  await store.put('segment/1', utf8('payload'), { ifAbsent: true });
  t.is(text(await store.get('segment/1')), 'payload');

  await store.put('segment/2', utf8('theirs'));
  server.failNext(1, { status: 500, method: 'PUT' });
  await t.throwsAsync(store.put('segment/2', utf8('ours'), { ifAbsent: true }), {
    instanceOf: PreconditionFailedError,
  });
  t.is(text(await store.get('segment/2')), 'theirs', 'someone else’s object is still a conflict');
});

test('https: a store trusting the server certificate works; one that does not fails start', async (t) => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '../../../../test/plugins/minio/tls');
  const certFile = join(dir, 'server-cert.pem');
  const server = await S3Server.start({ tls: { certFile, keyFile: join(dir, 'server-key.pem') } });
  t.teardown(() => server.close());
  t.regex(server.endpoint, /^https:\/\//);
  const trusting = new S3ObjectStore(
    storeOptions(server, { tls: { ca: await readFile(certFile, 'utf8') } }),
    new SystemClock(),
    new SeededRng(5),
    createSilentLogger(),
  );
  await trusting.start();
  t.teardown(() => trusting.stop());
  await trusting.put('secure/k', utf8('over tls'));
  t.is(text(await trusting.get('secure/k')), 'over tls');

  const untrusting = new S3ObjectStore(
    storeOptions(server),
    new SystemClock(),
    new SeededRng(6),
    createSilentLogger(),
  );
  t.teardown(() => untrusting.stop());
  const error = await t.throwsAsync(untrusting.start(), { instanceOf: StoreUnavailableError });
  t.regex(error!.message, /certificate is not trusted.*set tls\.ca/);
  t.notRegex(error!.message, /tries/, 'an untrusted certificate is not retried');
});

test('a key whose escaped name exceeds S3’s 1024 bytes is refused with InvalidKeyError', async (t) => {
  const { store, cleanup } = await openS3Fixture();
  t.teardown(cleanup);
  // Short segments: s3rver keeps each segment as a file name, which the file system caps.
  const fits = 'abcdefg/'.repeat(127) + 'abcdefgh';
  t.is(fits.length, 1024);
  await store.put(fits, utf8('x'));
  t.is(text(await store.get(fits)), 'x');
  const tooLong = 'ü'.repeat(205); // 5 bytes each once escaped
  const error = await t.throwsAsync(store.put(tooLong, utf8('x')), { instanceOf: InvalidKeyError });
  t.regex(error!.message, /1025 bytes long, over the 1024-byte limit/);
  await t.throwsAsync(store.get(tooLong), { instanceOf: InvalidKeyError });
});
