import test, { type ExecutionContext } from 'ava';
import { STREAM_NODE } from '@baton/stream-transfer';
import { loadConfig, WiringError } from '@baton/kernel';
import { hostConfig, type HostConfig } from '../src/config.js';
import { hostBuilder } from '../src/host.js';
import { eventually{{testHelperNames}} } from './support.js';

const ADMIN_TOKEN = 'test-admin-token';
const CONFIG_FILE = new URL('../../config/host.json', import.meta.url).pathname;

/** The host's config for one test: a free port, a known token, isolated storage, quiet logs. */
async function testConfig(t: ExecutionContext, node: Record<string, unknown> = {}): Promise<HostConfig> {
  return hostConfig.parse({
    node: {
      self: 'n1',
      http: { port: 0 },
      wal: { kind: 'memory' },
      tokens: [{ token: ADMIN_TOKEN, principal: 'admin', scopes: ['admin', 'stream:append', 'stream:read'] }],
      ...node,
    },
    consensus: {{consensusTestOptions}},
    peerTransport: { member: 'n1', peers: {} },
    objectStore: {{objectStoreTestOptions}},
    log: { level: 'silent' },
  });
}

/** One API request, with the admin token unless `token` is null. */
async function call(url: string, method: string, body?: unknown, token: string | null = ADMIN_TOKEN) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

test('the host starts on a free port, registers itself, serves streams, and stops', async (t) => {
  const host = hostBuilder(await testConfig(t)).build();
  await host.start();
  t.teardown(() => host.stop());
  const api = host.get(STREAM_NODE).url;

  await eventually(async () => (await call(`${api}/v1/admin/nodes`, 'GET')).body?.nodes?.length === 1, 'registration');
  t.is((await call(`${api}/v1/admin/streams`, 'POST', { stream: 'events' })).status, 201);
  // The node opens the stream just after placing it: an append waits on that, then lands.
  const appended = await call(`${api}/v1/streams/events/records`, 'POST', { records: [{ body: 'hello' }] });
  t.is(appended.status, 200, JSON.stringify(appended.body));
  const read = await call(`${api}/v1/streams/events/records?from=0`, 'GET');
  t.deepEqual(read.body.records, [{ offset: 0, body: 'hello' }]);

  const anonymous = await call(`${api}/v1/admin/nodes`, 'GET', undefined, null);
  t.is(anonymous.status, 401, 'the admin API refuses a request without a token');

  const metrics = await fetch(`${api}/metrics`);
  t.is(metrics.status, 200);
  t.regex(await metrics.text(), /^# HELP /m, 'Prometheus metrics');
});

test('config/host.json is a valid configuration of this host', async (t) => {
  const config = await loadConfig(hostConfig, { file: CONFIG_FILE, env: {} });
  t.notThrows(() => hostBuilder(config).build());
});

test('a config mistake fails the build, naming its path', async (t) => {
  const config = await testConfig(t, { wal: { kind: 'tape' } });
  const error = t.throws(() => hostBuilder(config).build(), { instanceOf: WiringError });
  t.regex(error!.message, /node\.wal/);
});
