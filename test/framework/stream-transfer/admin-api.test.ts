import test from 'ava';
import { ADMIN_TOKEN, ApiCluster, READER_TOKEN, admin, call } from './api-fixture.js';

async function started(t: { teardown(fn: () => Promise<void>): void }, nodes = ['a', 'b']): Promise<ApiCluster> {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const node of nodes) await api.addNode(node);
  return api;
}

test('admin routes answer 401 without or with an unknown token, 403 with a token lacking the admin scope', async (t) => {
  const api = await started(t);
  const url = `${api.url('a')}/v1/admin/nodes`;
  const missing = await call(url);
  t.is(missing.status, 401);
  t.regex(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
  t.is((await call(url, { token: 'nope' })).status, 401);
  const forbidden = await call(url, { token: READER_TOKEN });
  t.is(forbidden.status, 403);
  t.is(forbidden.body.required_scope, 'admin');
  t.is((await call(url, { token: ADMIN_TOKEN })).status, 200);
  t.is((await call(`${api.url('a')}/v1/admin/transfers`, { method: 'POST', json: { stream: 's', target: 'b' } })).status, 401);
});

test('POST /v1/admin/nodes registers (201), repeats as a no-op (200), validates input (400); GET lists with load', async (t) => {
  const api = await started(t);
  const url = `${api.url('a')}/v1/admin/nodes`;
  const created = await admin(url, 'POST', { id: 'd', address: 'http://d.example:8080', slots: 3 });
  t.is(created.status, 201);
  t.like(created.body.node, { id: 'd', slots: 3, owned: 0, draining: false });
  t.is((await admin(url, 'POST', { id: 'd', address: 'http://d.example:8080', slots: 3 })).status, 200);
  for (const bad of [{ id: 'd', address: 'not a url', slots: 1 }, { id: 'd', address: 'http://d', slots: 0 }, { id: 'd', address: 'http://d', slots: 1e12 }, { id: '-x', address: 'http://x', slots: 1 }, {}]) {
    const answer = await admin(url, 'POST', bad);
    t.is(answer.status, 400, JSON.stringify(bad));
    t.truthy(answer.body.invalid_fields?.length);
  }
  const list = await admin(url, 'GET');
  t.deepEqual(list.body.nodes.map((n: { id: string }) => n.id), ['a', 'b', 'd']);
});

test('POST /v1/admin/streams places a stream (201), repeats (200), refuses conflicts (409) and unknown nodes (404)', async (t) => {
  const api = await started(t);
  const url = `${api.url('a')}/v1/admin/streams`;
  const created = await admin(url, 'POST', { stream: 'orders', node: 'b' });
  t.is(created.status, 201);
  t.like(created.body, { stream: 'orders', owner: 'b', epoch: 1 });
  t.is((await admin(url, 'POST', { stream: 'orders' })).status, 200);
  const conflict = await admin(url, 'POST', { stream: 'orders', node: 'a' });
  t.is(conflict.status, 409);
  t.like(conflict.body, { reason: 'stream_exists' });
  const unknown = await admin(url, 'POST', { stream: 'other', node: 'zz' });
  t.is(unknown.status, 404);
  t.like(unknown.body, { reason: 'unknown_node' });
  t.is((await admin(url, 'POST', { stream: 'bad/id' })).status, 400);
});

test('a stream with no free slot anywhere is refused with 409', async (t) => {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  await api.addNode('a', 1);
  const url = `${api.url('a')}/v1/admin/streams`;
  t.is((await admin(url, 'POST', { stream: 's1' })).status, 201);
  const full = await admin(url, 'POST', { stream: 's2' });
  t.is(full.status, 409);
  t.like(full.body, { reason: 'no_free_slots' });
});

test('POST /v1/admin/transfers: 202 pending, same again 200, conflicting 409, unknown stream or target 404; GET shows it until settled', async (t) => {
  const api = await started(t, ['a', 'b', 'c']);
  const { cluster } = api;
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 's open');
  // The source cannot record its close for now, so the transfer stays pending while we look.
  cluster.failProposals('close', 1_000);
  const url = `${api.url('c')}/v1/admin/transfers`;
  const accepted = await admin(url, 'POST', { stream: 's', target: 'b' });
  t.is(accepted.status, 202);
  t.like(accepted.body, { status: 'pending', stream: 's', source: 'a', target: 'b', epoch: 1 });
  t.is((await admin(url, 'POST', { stream: 's', target: 'b' })).status, 200);
  const conflicting = await admin(url, 'POST', { stream: 's', target: 'c' });
  t.is(conflicting.status, 409);
  t.like(conflicting.body, { reason: 'already_transferring' });
  t.is((await admin(url, 'POST', { stream: 'ghost', target: 'b' })).status, 404);
  await cluster.must({ type: 'create-stream', stream: 'other', node: 'a' });
  const unknownTarget = await admin(url, 'POST', { stream: 'other', target: 'ghost' });
  t.is(unknownTarget.status, 404);
  t.like(unknownTarget.body, { reason: 'unknown_node' });
  t.is((await admin(url, 'POST', { stream: 's' })).status, 400);
  const listed = await admin(url, 'GET');
  t.like(listed.body.transfers[0], { stream: 's', source: 'a', target: 'b' });
  t.like((await admin(`${url}/s`, 'GET')).body, { status: 'pending', target: 'b' });
  cluster.clearFaults();
  await cluster.settled();
  t.like((await admin(`${url}/s`, 'GET')).body, { status: 'settled', owner: 'b', epoch: 2 });
  t.is((await admin(`${url}/ghost`, 'GET')).status, 404);
});

test('drain: 202, progress visible on GET /v1/admin/nodes/{node} until the node owns nothing', async (t) => {
  const api = await started(t, ['a', 'b', 'c']);
  const { cluster } = api;
  for (let i = 0; i < 12; i++) await cluster.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  const url = `${api.url('b')}/v1/admin/nodes/a`;
  const before = await admin(url, 'GET');
  t.like(before.body, { id: 'a', owned: 12, draining: false, drained: false });
  const started_ = await admin(`${url}/drain`, 'POST', { maxInFlight: 4 });
  t.is(started_.status, 202);
  t.like(started_.body, { draining: true, drainInFlight: 4 });
  t.true(started_.body.outgoing <= 4);
  await cluster.until(() => [...cluster.state.streams()].every((s) => s.owner !== 'a') && cluster.state.transferCount === 0, 'drain done');
  const after = await admin(url, 'GET');
  t.like(after.body, { owned: 0, outgoing: 0, draining: true, drained: true, remaining: 0 });
  const nodes = (await admin(`${api.url('a')}/v1/admin/nodes`, 'GET')).body.nodes;
  t.deepEqual(nodes.map((n: { owned: number }) => n.owned), [0, 6, 6]);
  t.is((await admin(`${api.url('a')}/v1/admin/nodes/ghost/drain`, 'POST')).status, 404);
  t.is((await admin(`${api.url('a')}/v1/admin/nodes/ghost`, 'GET')).status, 404);
  t.is((await admin(`${url}/drain`, 'POST', { maxInFlight: 0 })).status, 400);
});

test('rebalance: dry run shows the plan without moving anything; a run evens out streams per node', async (t) => {
  const api = await started(t, ['a', 'b', 'c']);
  const { cluster } = api;
  for (let i = 0; i < 9; i++) await cluster.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  const url = `${api.url('a')}/v1/admin/rebalance`;
  const dry = await admin(url, 'POST', { dryRun: true });
  t.is(dry.status, 200);
  t.is(dry.body.moves.length, 6);
  t.true(dry.body.moves.every((m: { source: string }) => m.source === 'a'), 'each move names the node it leaves');
  t.is(cluster.state.transferCount, 0);
  const run = await admin(url, 'POST', { maxInFlight: 2 });
  t.is(run.status, 202);
  t.is(run.body.moves.length, 6);
  t.true(run.body.moves.every((m: { source: string }) => m.source === 'a'));
  await cluster.until(() => (cluster.state.rebalance?.queue.length ?? 0) === 0 && cluster.state.transferCount === 0, 'rebalance done');
  const owned = (await admin(`${api.url('a')}/v1/admin/nodes`, 'GET')).body.nodes.map((n: { owned: number }) => n.owned);
  t.deepEqual(owned, [3, 3, 3]);
  t.like((await admin(url, 'GET')).body, { planned: 6, started: 6 });
});

test('admin changes answer 503 with Retry-After when the metadata has no leader', async (t) => {
  const api = await started(t);
  api.cluster.consensus.setLeadership({ isLeader: false });
  const answer = await admin(`${api.url('a')}/v1/admin/streams`, 'POST', { stream: 'x' });
  t.is(answer.status, 503);
  t.is(answer.headers.get('retry-after'), '1');
  api.cluster.consensus.setLeadership({ isLeader: true });
});

test('POST /v1/admin/nodes/{node}/failover: 409 for a node not Dead, 202 moving its streams once Dead or forced, 404 unknown, 400 bad body; liveness listed', async (t) => {
  const api = await started(t, ['a', 'b', 'c']);
  const base = `${api.url('a')}/v1/admin`;
  for (const stream of ['f1', 'f2']) t.is((await admin(`${base}/streams`, 'POST', { stream, node: 'c' })).status, 201);
  const listed = await admin(`${base}/nodes`, 'GET');
  t.like(listed.body.nodes[2], { id: 'c', liveness: 'Alive', owned: 2 });
  t.true('lastRenewalMsAgo' in listed.body.nodes[2]);

  const alive = await admin(`${base}/nodes/c/failover`, 'POST');
  t.is(alive.status, 409);
  t.like(alive.body, { type: 'urn:baton:problem:rejected-node-not-dead', reason: 'node_not_dead' });
  t.regex(alive.body.detail, /node c is Alive/);
  t.is((await admin(`${base}/nodes/zz/failover`, 'POST')).status, 404);
  t.is((await admin(`${base}/nodes/c/failover`, 'POST', { force: 'yes' })).status, 400);
  t.is((await admin(`${base}/nodes/c/failover`, 'POST', { other: 1 })).status, 400);

  await api.cluster.must({ type: 'node-liveness', node: 'c', liveness: 'Dead' });
  t.like((await admin(`${base}/nodes/c`, 'GET')).body, { liveness: 'Dead' });
  const done = await admin(`${base}/nodes/c/failover`, 'POST');
  t.is(done.status, 202);
  t.like(done.body, { id: 'c', liveness: 'Dead', moved: 2, remaining: 0, owned: 0, duplicate: false });
  const again = await admin(`${base}/nodes/c/failover`, 'POST');
  t.like(again.body, { moved: 0, duplicate: true });

  t.is((await admin(`${base}/streams`, 'POST', { stream: 'f3', node: 'b' })).status, 201);
  const forced = await admin(`${base}/nodes/b/failover`, 'POST', { force: true });
  t.is(forced.status, 202);
  t.like(forced.body, { id: 'b', liveness: 'Alive', remaining: 0 });
  t.true(forced.body.moved >= 1);
});

test('failover on a store without conditional puts is refused unless forced: the old owner could not be fenced there', async (t) => {
  const api = await started(t, ['a', 'b']);
  const base = `${api.url('a')}/v1/admin`;
  await admin(`${base}/streams`, 'POST', { stream: 'g', node: 'b' });
  await api.cluster.must({ type: 'node-liveness', node: 'b', liveness: 'Dead' });
  const supports = api.cluster.store.supports as { conditionalPut: boolean };
  supports.conditionalPut = false;
  t.teardown(() => void (supports.conditionalPut = true));
  const refused = await admin(`${base}/nodes/b/failover`, 'POST');
  t.is(refused.status, 409);
  t.like(refused.body, { type: 'urn:baton:problem:fencing-unavailable', node: 'b' });
  t.is(api.cluster.state.stream('g')!.owner, 'b');
  t.like((await admin(`${base}/nodes/b/failover`, 'POST', { force: true })).body, { moved: 1 });
});

test('rebalance answers stay bounded however large the plan: its size, its first moves, the queue in pages', async (t) => {
  const api = await started(t, ['a', 'b', 'c']);
  const { cluster } = api;
  for (const node of ['a', 'b', 'c']) await cluster.must({ type: 'register-node', node, address: cluster.state.node(node)!.address, slots: 400 });
  for (let i = 0; i < 330; i++) await cluster.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  const url = `${api.url('a')}/v1/admin/rebalance`;
  const dry = await admin(url, 'POST', { dryRun: true });
  t.is(dry.status, 200);
  t.like(dry.body, { dryRun: true, planned: 220, truncated: true });
  t.is(dry.body.moves.length, 100, 'the first moves only');
  t.is(cluster.state.transferCount, 0);
  t.is((await admin(`${url}?after=x`, 'GET')).status, 400);
  t.is((await admin(`${url}?limit=5000`, 'GET')).status, 400);
  t.like((await admin(url, 'GET')).body, { planned: 0, waiting: 0, queue: [], next: null });
  const run = await admin(url, 'POST', { maxInFlight: 1 });
  t.is(run.status, 202);
  t.like(run.body, { dryRun: false, planned: 220, truncated: true });
  t.is(run.body.moves.length, 100);
  t.true(run.body.progress.queue.length <= 100);
  t.true(JSON.stringify(run.body).length < 64 * 1024, 'the answer does not carry the whole plan');
});
