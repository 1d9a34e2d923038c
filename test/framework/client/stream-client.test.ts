import test from 'ava';
import { StreamApiError, StreamClient } from '@baton/client';
import { ADMIN_TOKEN, ApiCluster, DATA_TOKEN } from '../stream-transfer/api-fixture.js';

test('the client follows the 409 hint to the owner, and to the owner-to-be after a transfer', async (t) => {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const id of ['a', 'b', 'c']) await api.addNode(id);
  const client = new StreamClient({ nodes: [api.url('c')], token: ADMIN_TOKEN });
  await client.createStream('s', 'a');
  await api.cluster.until(() => api.cluster.serving('s'), 's open on a');
  const first = await client.append('s', ['one']);
  t.like(first, { node: 'a', first: 0, epoch: 1 });
  t.is(client.ownerOf('s'), api.url('a'));
  await client.transfer('s', 'b');
  await api.cluster.settled();
  const second = await client.append('s', ['two']);
  t.like(second, { node: 'b', first: 1, epoch: 2 });
  t.is(client.ownerOf('s'), api.url('b'));
  t.deepEqual((await client.read('s')).records.map((r) => r.body), ['one', 'two']);
});

test('a numbered producer is deduplicated across retries and handoffs', async (t) => {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const id of ['a', 'b']) await api.addNode(id);
  const client = new StreamClient({ nodes: [api.url('a')], token: ADMIN_TOKEN });
  await client.createStream('s', 'a');
  await api.cluster.until(() => api.cluster.serving('s'), 's open on a');
  const original = await client.append('s', ['x'], { id: 'p', seq: 0 });
  await client.transfer('s', 'b');
  await api.cluster.settled();
  const retried = await client.append('s', ['x'], { id: 'p', seq: 0 });
  t.like(retried, { first: original.first, duplicate: true, node: 'b' });
  const producer = client.producer('q');
  t.like(await producer.append('s', ['y']), { duplicate: false, first: 1 });
});

test('calls without the right token fail with the problem', async (t) => {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  await api.addNode('a');
  const client = new StreamClient({ nodes: [api.url('a')] });
  const error = await t.throwsAsync(client.nodes(), { instanceOf: StreamApiError });
  t.is(error?.status, 401);
  const anonymous = await t.throwsAsync(new StreamClient({ nodes: [api.url('a')] }).read('ghost'), { instanceOf: StreamApiError });
  t.is(anonymous?.status, 401);
  const unknown = await t.throwsAsync(new StreamClient({ nodes: [api.url('a')], token: DATA_TOKEN }).read('ghost'), { instanceOf: StreamApiError });
  t.is(unknown?.status, 404);
});

test('a believed owner that cannot be reached is left for another node, which knows where the stream went', async (t) => {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const id of ['a', 'b']) await api.addNode(id);
  let aReachable = true;
  const unreachableA: typeof fetch = (input, init) =>
    !aReachable && (input instanceof Request ? input.url : String(input)).startsWith(api.url('a')) ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init);
  const client = new StreamClient({ nodes: [api.url('a'), api.url('b')], token: ADMIN_TOKEN, fetch: unreachableA });
  await client.createStream('s', 'a');
  await api.cluster.until(() => api.cluster.serving('s'), 's open on a');
  t.like(await client.append('s', ['one'], { id: 'p', seq: 0 }), { node: 'a' });
  // a's host is gone; the stream is failed over to b.
  aReachable = false;
  await api.cluster.must({ type: 'failover', node: 'a', force: true });
  await api.cluster.until(() => api.cluster.serving('s'), 's taken over by b');
  t.like(await client.append('s', ['two'], { id: 'p', seq: 1 }), { node: 'b', first: 1 });
  t.is(client.ownerOf('s'), api.url('b'));
});
