import test from 'ava';
import { contractFetch } from '../../support/api-contract.js';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { StreamClient } from '@baton/client';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';

const TOKEN = 'store-admin';

async function eventually(condition: () => Promise<boolean> | boolean, what: string, ms = 10_000): Promise<void> {
  const clock = new SystemClock();
  const deadline = clock.now() + ms;
  while (!(await condition())) {
    if (clock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.sleep(10);
  }
}

test('an object store outage is answered 503 and counted on /metrics by store and operation', async (t) => {
  const store = new MemoryObjectStore();
  let down = false;
  // The real store, except that reads fail as unavailable while `down` is set.
  const flaky = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (down && (property === 'get' || property === 'list')) {
          return Promise.reject(new StoreUnavailableError('memory-object-store', 'injected outage'));
        }
        return value.apply(target, args);
      };
    },
  });
  const host = streamNodeHostBuilder({
    node: { self: 'n1', http: { port: 0 }, wal: { kind: 'memory' }, tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }] },
    dataDir: null,
    log: { level: 'silent' },
  })
    .value(OBJECT_STORE, flaky)
    .build();
  await host.start();
  t.teardown(() => host.stop());
  const node = host.get(STREAM_NODE);
  const client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes().catch(() => ({ nodes: [] }))).nodes.length === 1, 'registration');
  await client.createStream('s');
  await eventually(() => node.node.session('s')?.writable === true, 'pre-warm');
  await client.append('s', ['durable']);

  down = true;
  const read = await fetch(`${node.url}/v1/streams/s/records?from=0`, { headers: { authorization: `Bearer ${TOKEN}` } });
  t.is(read.status, 503);
  t.regex(read.headers.get('content-type') ?? '', /problem\+json/);
  const metrics = await (await fetch(`${node.url}/metrics`)).text();
  const counted = metrics
    .split('\n')
    .filter((line) => line.startsWith('baton_store_errors_total{') && line.includes('store="object-store"'))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)))
    .reduce((a, b) => a + b, 0);
  t.true(counted >= 1, metrics.split('\n').filter((l) => l.startsWith('baton_store_errors')).join('\n'));

  down = false;
  t.deepEqual((await client.read('s')).records.map((r) => r.body), ['durable']);
});
