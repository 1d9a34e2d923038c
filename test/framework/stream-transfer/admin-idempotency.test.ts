import test from 'ava';
import { ADMIN_TOKEN, ApiCluster, call, type Answer } from './api-fixture.js';

async function started(t: { teardown(fn: () => Promise<void>): void }, nodes = ['a', 'b', 'c']): Promise<ApiCluster> {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const node of nodes) await api.addNode(node);
  return api;
}

const keyed = (url: string, key: string, json?: unknown) =>
  call(url, { method: 'POST', json, token: ADMIN_TOKEN, headers: { 'Idempotency-Key': key } });

/** The parts of an answer a replay must repeat: status, body, and the key echoed. */
function same(t: { is(a: unknown, b: unknown, m?: string): void; deepEqual(a: unknown, b: unknown, m?: string): void }, first: Answer, replay: Answer, what: string) {
  t.is(replay.status, first.status, what);
  t.deepEqual(replay.body, first.body, what);
  t.is(replay.headers.get('idempotency-key'), first.headers.get('idempotency-key'), what);
  t.is(first.headers.get('idempotent-replayed'), null, what);
  t.is(replay.headers.get('idempotent-replayed'), 'true', what);
}

test('create under a key: the same request again, on another node, replays the first answer; another request under it is 422', async (t) => {
  const api = await started(t);
  const first = await keyed(`${api.url('a')}/v1/admin/streams`, 'create-orders', { stream: 'orders', node: 'b' });
  t.is(first.status, 201);
  t.like(first.body, { stream: 'orders', owner: 'b', epoch: 1, duplicate: false });
  t.is(first.headers.get('idempotency-key'), 'create-orders');
  same(t, first, await keyed(`${api.url('c')}/v1/admin/streams`, 'create-orders', { stream: 'orders', node: 'b' }), 'create replay');
  const other = await keyed(`${api.url('a')}/v1/admin/streams`, 'create-orders', { stream: 'orders2' });
  t.is(other.status, 422);
  t.like(other.body, { type: 'urn:baton:problem:idempotency-key-reused' });
  t.is(api.cluster.state.stream('orders2'), undefined);
  // Without a key the state machine's own rule answers a repeat: a no-op, not a replay.
  const unkeyed = await call(`${api.url('a')}/v1/admin/streams`, { method: 'POST', json: { stream: 'orders', node: 'b' }, token: ADMIN_TOKEN });
  t.is(unkeyed.status, 200);
  t.is(unkeyed.headers.get('idempotent-replayed'), null);

  const register = await keyed(`${api.url('a')}/v1/admin/nodes`, 'register-d', { id: 'd', address: 'http://d.example', slots: 2 });
  t.is(register.status, 201);
  same(t, register, await keyed(`${api.url('b')}/v1/admin/nodes`, 'register-d', { id: 'd', address: 'http://d.example', slots: 2 }), 'register replay');
  t.is((await keyed(`${api.url('b')}/v1/admin/nodes`, 'register-d', { id: 'd', address: 'http://d.example', slots: 3 })).status, 422);
});

test('a transfer retried on another member under its key replays the 202 it got, even after the handoff settled', async (t) => {
  const api = await started(t);
  const { cluster } = api;
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 's open');
  const first = await keyed(`${api.url('a')}/v1/admin/transfers`, 'move-s', { stream: 's', target: 'b', expected_epoch: 1 });
  t.is(first.status, 202);
  t.like(first.body, { status: 'pending', source: 'a', target: 'b', epoch: 1, duplicate: false });
  await cluster.settled();
  // The answer is the decision, not the state now: a retry must not read as a second move.
  same(t, first, await keyed(`${api.url('c')}/v1/admin/transfers`, 'move-s', { stream: 's', target: 'b', expected_epoch: 1 }), 'transfer replay');
  t.like(cluster.state.stream('s'), { owner: 'b', epoch: 2 });
  t.is((await keyed(`${api.url('c')}/v1/admin/transfers`, 'move-s', { stream: 's', target: 'c' })).status, 422);
  t.is(cluster.state.transferCount, 0);
});

test('a refused request replays its refusal: the 412 a stale guard got is the answer for its key', async (t) => {
  const api = await started(t);
  await api.cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  const first = await keyed(`${api.url('a')}/v1/admin/transfers`, 'stale-move', { stream: 's', target: 'b', expected_epoch: 7 });
  t.is(first.status, 412);
  const replay = await keyed(`${api.url('b')}/v1/admin/transfers`, 'stale-move', { stream: 's', target: 'b', expected_epoch: 7 });
  t.is(replay.status, 412);
  t.is(replay.body.detail, first.body.detail);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.headers.get('idempotency-key'), 'stale-move');
});

test('drain, undrain, failover and rebalance under a key replay their decision; another request under each key is 422', async (t) => {
  const api = await started(t);
  const { cluster } = api;
  for (const stream of ['k1', 'k2']) await cluster.must({ type: 'create-stream', stream, node: 'a' });
  const admin = (node: string) => `${api.url(node)}/v1/admin`;

  const drain = await keyed(`${admin('a')}/nodes/a/drain`, 'drain-a', { maxInFlight: 1 });
  t.is(drain.status, 202);
  t.like(drain.body, { id: 'a', draining: true, owned: 2, remaining: 2 });
  await cluster.settled();
  t.is(cluster.state.ownedCount('a'), 0);
  // The node is empty now; the replay still answers what the drain was answered.
  same(t, drain, await keyed(`${admin('b')}/nodes/a/drain`, 'drain-a', { maxInFlight: 1 }), 'drain replay');
  t.is((await keyed(`${admin('b')}/nodes/a/drain`, 'drain-a', { maxInFlight: 2 })).status, 422);
  t.is((await keyed(`${admin('b')}/nodes/b/drain`, 'drain-a')).status, 422);
  t.is(cluster.state.node('a')!.drainInFlight, 1);
  t.false(cluster.state.node('b')!.draining);

  const undrain = await keyed(`${admin('a')}/nodes/a/undrain`, 'undrain-a');
  t.is(undrain.status, 200);
  same(t, undrain, await keyed(`${admin('c')}/nodes/a/undrain`, 'undrain-a'), 'undrain replay');
  t.is((await keyed(`${admin('c')}/nodes/c/undrain`, 'undrain-a')).status, 422);

  await cluster.must({ type: 'create-stream', stream: 'k3', node: 'c' });
  await cluster.must({ type: 'node-liveness', node: 'c', liveness: 'Dead' });
  const owned = cluster.state.ownedCount('c');
  const failover = await keyed(`${admin('a')}/nodes/c/failover`, 'failover-c');
  t.is(failover.status, 202);
  t.like(failover.body, { moved: owned, duplicate: false });
  // A repeat without the key would be a duplicate that moved nothing; the replay is the first decision.
  same(t, failover, await keyed(`${admin('b')}/nodes/c/failover`, 'failover-c'), 'failover replay');
  t.is((await keyed(`${admin('b')}/nodes/c/failover`, 'failover-c', { force: true })).status, 422);

  // An uneven cluster, so the rebalance plans moves (c is Dead and takes none).
  for (const stream of ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']) await cluster.must({ type: 'create-stream', stream, node: 'a' });
  const rebalance = await keyed(`${admin('a')}/rebalance`, 'rebalance-1', { maxInFlight: 3 });
  t.is(rebalance.status, 202);
  t.true(rebalance.body.planned > 0, JSON.stringify(rebalance.body));
  await cluster.settled();
  // Every move ran since: the replay still shows the plan and progress the start was answered.
  same(t, rebalance, await keyed(`${admin('b')}/rebalance`, 'rebalance-1', { maxInFlight: 3 }), 'rebalance replay');
  t.is((await keyed(`${admin('b')}/rebalance`, 'rebalance-1', { maxInFlight: 4 })).status, 422);
});

test('an invalid Idempotency-Key is a 400 problem and proposes nothing', async (t) => {
  const api = await started(t, ['a']);
  const url = `${api.url('a')}/v1/admin/streams`;
  for (const bad of ['has space', 'x'.repeat(129), 'slash/key', ' ']) {
    const answer = await keyed(url, bad, { stream: 'never' });
    t.is(answer.status, 400, bad);
    t.like(answer.body, { type: 'urn:baton:problem:invalid-idempotency-key' }, bad);
  }
  const twice = await call(url, { method: 'POST', json: { stream: 'never' }, token: ADMIN_TOKEN, headers: [['Idempotency-Key', 'a'], ['Idempotency-Key', 'b']] });
  t.is(twice.status, 400);
  t.is(api.cluster.state.stream('never'), undefined);
});
