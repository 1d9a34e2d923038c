import test from 'ava';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { eventually } from '../eventually.js';
import { ADMIN_TOKEN, RaftStreamCluster } from './raft-stream-cluster.js';

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function post(url: string, json: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

async function get(url: string): Promise<Answer> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

test('three stream nodes on Raft: a keyed transfer retried on another member, and after the whole cluster restarted, replays its first answer; stale guards are 412', async (t) => {
  const dir = await makeTempDir('stream-admin-retries');
  t.teardown(() => dir.remove());
  const cluster = await RaftStreamCluster.start(dir.path, ['n1', 'n2', 'n3']);
  t.teardown(() => cluster.stop());
  const admin = (id: string) => `${cluster.url(id)}/v1/admin`;
  await eventually(async () => (await get(`${admin('n1')}/nodes`)).body.nodes?.length === 3, 'three nodes registered');

  const created = await post(`${admin('n1')}/streams`, { stream: 'orders', node: 'n1' }, { 'idempotency-key': 'create-orders' });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.is((await post(`${admin('n3')}/streams`, { stream: 'orders', node: 'n1' }, { 'idempotency-key': 'create-orders' })).headers.get('idempotent-replayed'), 'true');
  const described = await get(`${cluster.url('n2')}/v1/streams/orders`);
  t.is(described.headers.get('etag'), '"1"');

  // A guard on the wrong epoch, or on a node's stale stream count, changes nothing.
  const stale = await post(`${admin('n2')}/transfers`, { stream: 'orders', target: 'n2' }, { 'if-match': '"2"' });
  t.is(stale.status, 412);
  t.like(stale.body, { reason: 'precondition_failed', owner: 'n1', epoch: 1 });
  const staleDrain = await post(`${admin('n2')}/nodes/n1/drain`, {}, { 'if-match': '"0"' });
  t.is(staleDrain.status, 412);
  t.like(staleDrain.body, { node: 'n1', streams: 1 });
  t.is((await get(`${admin('n3')}/nodes/n1`)).headers.get('etag'), '"1"');

  const first = await post(`${admin('n2')}/transfers`, { stream: 'orders', target: 'n2' }, { 'idempotency-key': 'move-orders', 'if-match': described.headers.get('etag')! });
  t.is(first.status, 202, JSON.stringify(first.body));
  t.like(first.body, { status: 'pending', stream: 'orders', source: 'n1', target: 'n2', epoch: 1, duplicate: false });
  // The retry lands on another member (the client's first answer was lost, say).
  const retried = await post(`${admin('n3')}/transfers`, { stream: 'orders', target: 'n2' }, { 'idempotency-key': 'move-orders', 'if-match': '"1"' });
  t.is(retried.status, 202);
  t.deepEqual(retried.body, first.body);
  t.is(retried.headers.get('idempotent-replayed'), 'true');
  const reused = await post(`${admin('n1')}/transfers`, { stream: 'orders', target: 'n3' }, { 'idempotency-key': 'move-orders' });
  t.is(reused.status, 422);
  t.like(reused.body, { type: 'urn:baton:problem:idempotency-key-reused' });
  await eventually(async () => (await get(`${cluster.url('n1')}/v1/streams/orders`)).headers.get('etag') === '"2"', 'the handoff to settle at epoch 2');

  // The window lives in the replicated state (log and snapshots): a restart keeps the decision.
  await cluster.restart();
  await eventually(async () => (await get(`${admin('n1')}/nodes`)).status === 200, 'the cluster to serve again');
  const afterRestart = await post(`${admin('n1')}/transfers`, { stream: 'orders', target: 'n2' }, { 'idempotency-key': 'move-orders', 'if-match': '"1"' });
  t.is(afterRestart.status, 202);
  t.deepEqual(afterRestart.body, first.body);
  t.is(afterRestart.headers.get('idempotent-replayed'), 'true');
  // Without the key the guard is evaluated afresh: the stream moved on (to 2, and the owner's
  // recovery after the restart reopens it at a later epoch still).
  const unkeyed = await post(`${admin('n1')}/transfers`, { stream: 'orders', target: 'n3' }, { 'if-match': '"1"' });
  t.is(unkeyed.status, 412);
  t.is(unkeyed.body.owner, 'n2');
  t.true(unkeyed.body.epoch >= 2);
});
