import test from 'ava';
import { ADMIN_TOKEN, ApiCluster, admin, call } from './api-fixture.js';

async function started(t: { teardown(fn: () => Promise<void>): void }, nodes = ['a', 'b']): Promise<ApiCluster> {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const node of nodes) await api.addNode(node);
  return api;
}

const NAMES = ['constructor', 'hasOwnProperty', 'orders', 's1', 's2', 'toString', 'valueOf'];

test('GET /v1/admin/streams pages by id with a next cursor until null; ids named like Object.prototype members are ordinary', async (t) => {
  const api = await started(t);
  for (const stream of NAMES.filter((s) => s !== 'orders')) {
    t.is((await admin(`${api.url('a')}/v1/admin/streams`, 'POST', { stream })).status, 201);
  }
  // On a node that is registered but never runs, the transfer away from it stays pending.
  await admin(`${api.url('a')}/v1/admin/nodes`, 'POST', { id: 'z', address: 'http://127.0.0.1:9', slots: 10 });
  await admin(`${api.url('a')}/v1/admin/streams`, 'POST', { stream: 'orders', node: 'z' });
  t.is((await admin(`${api.url('a')}/v1/admin/transfers`, 'POST', { stream: 'orders', target: 'b' })).status, 202);
  const seen: string[] = [];
  let after = '';
  let pages = 0;
  for (;;) {
    const answer = await admin(`${api.url('b')}/v1/admin/streams?after=${after}&limit=3`, 'GET');
    t.is(answer.status, 200);
    t.true(answer.body.streams.length <= 3);
    t.is(answer.body.total, NAMES.length);
    seen.push(...answer.body.streams.map((s: { stream: string }) => s.stream));
    pages += 1;
    if (answer.body.next === null) break;
    t.is(answer.body.next, seen[seen.length - 1], 'the cursor is the last id of the page');
    after = answer.body.next;
  }
  t.deepEqual(seen, [...NAMES].sort());
  t.is(pages, 3);
  const all = await admin(`${api.url('a')}/v1/admin/streams`, 'GET');
  t.is(all.body.next, null);
  const orders = all.body.streams.find((s: { stream: string }) => s.stream === 'orders');
  t.like(orders, { owner: 'z', epoch: 1, state: 'open', tail: 0, transfer: { source: 'z', target: 'b', reason: 'admin' } });
  const constructorStream = all.body.streams.find((s: { stream: string }) => s.stream === 'constructor');
  t.like(constructorStream, { stream: 'constructor', epoch: 1, state: 'open' });
});

test('listing routes refuse bad paging parameters with a 400 problem naming the field', async (t) => {
  const api = await started(t, ['a']);
  for (const route of ['streams', 'nodes', 'transfers']) {
    // A count is decimal digits: "1e3", "0x10", " 5" and "" are not read as 1000, 16, 5 or 0.
    for (const query of ['limit=0', 'limit=1001', 'limit=two', 'limit=1e3', 'limit=0x10', 'limit=%205', 'limit=', 'limit=2.5', 'after=-bad', 'after=x&page=2']) {
      const answer = await call(`${api.url('a')}/v1/admin/${route}?${query}`, { token: ADMIN_TOKEN });
      t.is(answer.status, 400, `${route}?${query}`);
      t.is(answer.headers.get('content-type')?.split(';')[0], 'application/problem+json');
      t.truthy(answer.body.invalid_fields?.length, `${route}?${query} names the field`);
    }
  }
});

test('GET /v1/admin/nodes and /v1/admin/transfers are paged too: no listing returns an unbounded body', async (t) => {
  const api = await started(t, ['a', 'b', 'c']);
  const first = await admin(`${api.url('a')}/v1/admin/nodes?limit=2`, 'GET');
  t.deepEqual(first.body.nodes.map((n: { id: string }) => n.id), ['a', 'b']);
  t.is(first.body.next, 'b');
  const second = await admin(`${api.url('a')}/v1/admin/nodes?limit=2&after=b`, 'GET');
  t.deepEqual(second.body.nodes.map((n: { id: string }) => n.id), ['c']);
  t.is(second.body.next, null);
  // Transfers to a node that is registered but never runs stay pending: page through them oldest first.
  await admin(`${api.url('a')}/v1/admin/nodes`, 'POST', { id: 'z', address: 'http://127.0.0.1:9', slots: 10 });
  for (const stream of ['t1', 't2', 't3']) {
    await admin(`${api.url('a')}/v1/admin/streams`, 'POST', { stream, node: 'z' });
    await admin(`${api.url('a')}/v1/admin/transfers`, 'POST', { stream, target: 'a' });
  }
  const page1 = await admin(`${api.url('a')}/v1/admin/transfers?limit=2`, 'GET');
  t.deepEqual(page1.body.transfers.map((p: { stream: string }) => p.stream), ['t1', 't2']);
  t.is(page1.body.total, 3);
  t.regex(page1.body.next, /^\d+:t2$/);
  const page2 = await admin(`${api.url('a')}/v1/admin/transfers?limit=2&after=${page1.body.next}`, 'GET');
  t.deepEqual(page2.body.transfers.map((p: { stream: string }) => p.stream), ['t3']);
  t.is(page2.body.next, null);
});
