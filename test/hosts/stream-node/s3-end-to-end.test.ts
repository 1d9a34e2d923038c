import test from 'ava';
import { StreamClient } from '@baton/client';
import { S3Server } from '@baton/testing/internal/s3-server.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { eventually } from '../eventually.js';
import { ADMIN_TOKEN, startS3StreamCluster } from './s3-stream-cluster.js';

async function appendRaw(base: string, stream: string, bodies: string[]) {
  const response = await fetch(`${base}/v1/streams/${stream}/records`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({ records: bodies.map((body) => ({ body })) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Segment writes n2's object store gave up on, as its /metrics counts them. */
async function failedPuts(base: string): Promise<number> {
  const metrics = await (await fetch(`${base}/metrics`)).text();
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('baton_store_errors_total{'))
    .filter((line) => line.includes('store="object-store"') && line.includes('operation="put"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

test('two stream nodes on one Raft and a real S3 server: a handoff, an S3 outage answered 503, and after the restart every acknowledged record in order and nothing else', async (t) => {
  const server = await S3Server.start();
  t.teardown(() => server.close());
  const dir = await makeTempDir('stream-s3-e2e');
  t.teardown(() => dir.remove());
  const cluster = await startS3StreamCluster(server, dir.path, ['n1', 'n2']);
  t.teardown(() => cluster.stop());
  const [n1, n2] = cluster.nodes.map((n) => n.node);
  const client = new StreamClient({ nodes: cluster.urls, token: ADMIN_TOKEN });
  /** Every record some node acknowledged, with the offset it was acknowledged at. */
  const acknowledged: { offset: number; body: string }[] = [];
  const remember = (first: number, bodies: string[]) =>
    bodies.forEach((body, i) => acknowledged.push({ offset: first + i, body }));

  await eventually(async () => (await client.nodes()).nodes.length === 2, 'both nodes registered');
  await client.createStream('orders', 'n1');
  await eventually(() => n1.node.session('orders')?.writable === true, 'orders open on n1');
  for (const batch of [['a1', 'a2'], ['a3']]) {
    const ack = await client.append('orders', batch);
    t.like(ack, { node: 'n1', epoch: 1 });
    remember(ack.first, batch);
  }

  // Seed 000 handoff: n1 closes at epoch 1 and completes; n2 opens at epoch 2.
  await client.transfer('orders', 'n2');
  await eventually(
    async () => (await client.transferStatus('orders')).status === 'settled',
    'the handoff to settle',
  );
  await eventually(() => n2.node.session('orders')?.writable === true, 'orders open on n2');
  t.like(await client.describe('orders'), { owner: 'n2', epoch: 2 });
  const afterHandoff = ['b1', 'b2'];
  const onTarget = await client.append('orders', afterHandoff);
  t.like(onTarget, { node: 'n2', epoch: 2, first: 3 });
  remember(onTarget.first, afterHandoff);

  await server.stop();
  // The batch in flight is logged but its segment cannot be stored: it is held, unanswered.
  const held = appendRaw(cluster.urls[1], 'orders', ['held']);
  let heldAnswered = false;
  void held.finally(() => (heldAnswered = true));
  await eventually(async () => (await failedPuts(cluster.urls[1])) > 0, 'n2 to meet the outage');
  const session = n2.node.session('orders')!;
  t.true(session.tail > session.durableTail, 'the held batch is logged, not durable');
  const refused: string[] = [];
  for (const label of ['r1', 'r2', 'r3']) {
    const answer = await appendRaw(cluster.urls[1], 'orders', [label]);
    t.is(answer.status, 503, JSON.stringify(answer.body));
    t.like(answer.body, { type: 'urn:baton:problem:append-unavailable' });
    t.regex(String(answer.body.detail), /object store is unavailable/);
    refused.push(label);
  }
  const read = await fetch(`${cluster.urls[1]}/v1/streams/orders/records?from=0`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.is(read.status, 503, 'reads come from the store: unavailable, never a partial answer');
  t.false(heldAnswered, 'nothing is acknowledged while its segment is not stored');

  // Same port, same directory; the nodes keep running.
  await server.restart();
  const heldAnswer = await held;
  t.is(heldAnswer.status, 200, JSON.stringify(heldAnswer.body));
  t.like(heldAnswer.body, { node: 'n2', epoch: 2, first: 5 });
  remember(heldAnswer.body.first as number, ['held']);
  const afterOutage = ['c1', 'c2'];
  const healed = await client.append('orders', afterOutage);
  t.like(healed, { node: 'n2', epoch: 2, first: 6 });
  remember(healed.first, afterOutage);

  const stored = await client.read('orders');
  t.deepEqual(stored.records, acknowledged, 'every acknowledged record, at its offset, in order');
  for (const body of refused) {
    t.false(
      stored.records.some((r) => r.body === body),
      'a refused append never appears',
    );
  }
  t.like(await client.describe('orders'), { owner: 'n2', epoch: 2, tail: acknowledged.length });
});
