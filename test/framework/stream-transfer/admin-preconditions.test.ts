import test from 'ava';
import { ADMIN_TOKEN, ApiCluster, admin, call } from './api-fixture.js';

async function started(t: { teardown(fn: () => Promise<void>): void }, nodes = ['a', 'b', 'c']): Promise<ApiCluster> {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const node of nodes) await api.addNode(node);
  return api;
}

const guarded = (url: string, method: string, json: unknown, ifMatch?: string) =>
  call(url, { method, json, token: ADMIN_TOKEN, headers: ifMatch === undefined ? {} : { 'If-Match': ifMatch } });

test('GET of a stream answers ETag "<epoch>"; a transfer under a stale If-Match is 412 naming owner and epoch, under the current one it moves', async (t) => {
  const api = await started(t);
  const { cluster } = api;
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 's open');
  const described = await call(`${api.url('b')}/v1/streams/s`, { token: ADMIN_TOKEN });
  t.is(described.status, 200);
  t.is(described.headers.get('etag'), '"1"');
  t.is((await admin(`${api.url('b')}/v1/admin/transfers/s`, 'GET')).headers.get('etag'), '"1"');

  const url = `${api.url('c')}/v1/admin/transfers`;
  const stale = await guarded(url, 'POST', { stream: 's', target: 'b' }, '"2"');
  t.is(stale.status, 412);
  t.regex(stale.headers.get('content-type') ?? '', /application\/problem\+json/);
  t.like(stale.body, { type: 'urn:baton:problem:rejected-precondition-failed', reason: 'precondition_failed', stream: 's', owner: 'a', epoch: 1 });
  t.is(cluster.state.transferCount, 0);
  const otherOwner = await admin(url, 'POST', { stream: 's', target: 'b', expected_owner: 'c', expected_epoch: 1 });
  t.is(otherOwner.status, 412);
  t.like(otherOwner.body, { owner: 'a', epoch: 1 });

  const moved = await guarded(url, 'POST', { stream: 's', target: 'b', expected_owner: 'a' }, '"1"');
  t.is(moved.status, 202);
  t.like(moved.body, { status: 'pending', stream: 's', source: 'a', target: 'b', epoch: 1 });
  await cluster.settled();
  // The move made epoch 2: the guard an operator read before it is stale now.
  const late = await guarded(url, 'POST', { stream: 's', target: 'c' }, '"1"');
  t.is(late.status, 412);
  t.like(late.body, { owner: 'b', epoch: 2 });
  t.is((await call(`${api.url('a')}/v1/streams/s`, { token: ADMIN_TOKEN })).headers.get('etag'), '"2"');
});

test('a malformed If-Match, or one that disagrees with the body, is a 400 and moves nothing', async (t) => {
  const api = await started(t);
  await api.cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  const url = `${api.url('a')}/v1/admin/transfers`;
  for (const bad of ['1', 'W/"1"', '"one"', '"-1"', '"1", "2"', '"1234567890123456"', '']) {
    const answer = await guarded(url, 'POST', { stream: 's', target: 'b' }, bad);
    t.is(answer.status, 400, bad);
    t.regex(answer.headers.get('content-type') ?? '', /application\/problem\+json/, bad);
  }
  const disagreeing = await guarded(url, 'POST', { stream: 's', target: 'b', expected_epoch: 2 }, '"1"');
  t.is(disagreeing.status, 400);
  t.like(disagreeing.body, { type: 'urn:baton:problem:invalid-precondition' });
  t.is((await admin(url, 'POST', { stream: 's', target: 'b', expected_epoch: -1 })).status, 400);
  t.is((await admin(`${api.url('a')}/v1/admin/nodes/a/drain`, 'POST', { expected_streams: 'all' })).status, 400);
  t.is(api.cluster.state.transferCount, 0);
  t.false(api.cluster.state.node('a')!.draining);
  // `*` matches any current stream: no precondition beyond its existence.
  t.is((await guarded(url, 'POST', { stream: 's', target: 'b' }, '*')).status, 202);
});

test('GET of a node answers ETag "<owned streams>"; a drain under a stale count is 412 and drains nothing, under the current count it drains', async (t) => {
  const api = await started(t);
  const base = `${api.url('b')}/v1/admin/nodes/a`;
  for (const stream of ['d1', 'd2']) await api.cluster.must({ type: 'create-stream', stream, node: 'a' });
  const node = await admin(base, 'GET');
  t.is(node.headers.get('etag'), '"2"');
  await api.cluster.must({ type: 'create-stream', stream: 'd3', node: 'a' });

  const stale = await guarded(`${base}/drain`, 'POST', undefined, node.headers.get('etag')!);
  t.is(stale.status, 412);
  t.like(stale.body, { reason: 'precondition_failed', node: 'a', streams: 3 });
  t.false(api.cluster.state.node('a')!.draining);
  t.is((await admin(`${base}/drain`, 'POST', { expected_streams: 2 })).status, 412);

  const drained = await guarded(`${base}/drain`, 'POST', { maxInFlight: 2 }, (await admin(base, 'GET')).headers.get('etag')!);
  t.is(drained.status, 202);
  t.like(drained.body, { id: 'a', draining: true });
});

test('a failover under a stale stream count is 412 and moves nothing; under the current count it fails the node over', async (t) => {
  const api = await started(t);
  const base = `${api.url('a')}/v1/admin/nodes/c`;
  await api.cluster.must({ type: 'create-stream', stream: 'f1', node: 'c' });
  await api.cluster.must({ type: 'node-liveness', node: 'c', liveness: 'Dead' });
  const stale = await guarded(`${base}/failover`, 'POST', undefined, '"0"');
  t.is(stale.status, 412);
  t.like(stale.body, { node: 'c', streams: 1 });
  t.is(api.cluster.state.stream('f1')!.owner, 'c');
  t.is((await admin(`${base}/failover`, 'POST', { expected_streams: 5 })).status, 412);
  const done = await guarded(`${base}/failover`, 'POST', { expected_streams: 1 }, '"1"');
  t.is(done.status, 202);
  t.like(done.body, { moved: 1, remaining: 0 });
  t.not(api.cluster.state.stream('f1')!.owner, 'c');
});

test('two operators guarding with the epoch they both read, sent at once to different members: exactly one move is accepted', async (t) => {
  const api = await started(t);
  await api.cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  const answers = await Promise.all([
    guarded(`${api.url('b')}/v1/admin/transfers`, 'POST', { stream: 's', target: 'b' }, '"1"'),
    guarded(`${api.url('c')}/v1/admin/transfers`, 'POST', { stream: 's', target: 'c' }, '"1"'),
  ]);
  const accepted = answers.filter((a) => a.status === 202);
  t.is(accepted.length, 1, JSON.stringify(answers.map((a) => a.body)));
  // The other one meets the first one's pending move (409), or its completed one (412): never a second move.
  const refused = answers.find((a) => a.status !== 202)!;
  t.true([409, 412].includes(refused.status), JSON.stringify(refused.body));
  t.is(api.cluster.state.transfer('s')?.target ?? api.cluster.state.stream('s')!.owner, accepted[0].body.target);
});
