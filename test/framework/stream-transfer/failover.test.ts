import test from 'ava';
import { StreamFencedError } from '@baton/stream-transfer/internal/errors.js';
import { readSegment, segmentKey } from '@baton/stream-transfer/internal/segments.js';
import { Cluster } from './cluster-fixture.js';

/** Two nodes, stream s on a with three acknowledged batches from producer p. */
async function streamOnA(): Promise<Cluster> {
  const cluster = new Cluster();
  await cluster.addNode('a');
  await cluster.addNode('b');
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 'stream s open on a');
  const a = cluster.node('a');
  for (let seq = 0; seq < 3; seq++) await a.append('s', [`p:${seq}`], { id: 'p', seq });
  return cluster;
}

async function failOver(cluster: Cluster, node: string): Promise<void> {
  await cluster.must({ type: 'node-liveness', node, liveness: 'Dead' });
  await cluster.must({ type: 'failover', node });
}

async function bodies(cluster: Cluster, node = 'b'): Promise<string[]> {
  return (await cluster.node(node).read('s', 0, 100)).map((r) => r.body);
}

test('a failover gives a dead owner its streams elsewhere at the next epoch; the new owner finds the tail in the store and keeps producer dedup', async (t) => {
  const cluster = await streamOnA();
  cluster.crash('a');
  await failOver(cluster, 'a');
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2, state: 'open', takeover: { from: 'a', epoch: 1 } });
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  const b = cluster.node('b');
  t.is(b.session('s')!.tail, 3, 'the tail was found in the object store, not in the metadata (which says 0)');
  t.like(await b.append('s', ['p:2'], { id: 'p', seq: 2 }), { first: 2, duplicate: true }, 'a retry of the last stored batch is answered, not re-appended');
  t.like(await b.append('s', ['p:3'], { id: 'p', seq: 3 }), { epoch: 2, first: 3, duplicate: false });
  t.deepEqual(await bodies(cluster), ['p:0', 'p:1', 'p:2', 'p:3']);
  await cluster.stopAll();
});

test('an owner cut off from the metadata never acknowledges an append after the takeover, and nothing it writes becomes readable', async (t) => {
  const cluster = await streamOnA();
  cluster.cutOffFromMetadata('a');
  await failOver(cluster, 'a');
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  // a still believes it owns s at epoch 1: only the object store can stop it.
  t.is(cluster.node('a').metadata().stream('s')!.owner, 'a');
  await t.throwsAsync(cluster.node('a').append('s', ['zombie'], { id: 'z', seq: 0 }), { instanceOf: StreamFencedError });
  await t.throwsAsync(cluster.node('a').append('s', ['zombie-again']), { instanceOf: StreamFencedError });
  t.like(await cluster.node('b').append('s', ['after']), { epoch: 2, first: 3 });
  t.deepEqual(await bodies(cluster), ['p:0', 'p:1', 'p:2', 'after']);
  await cluster.stopAll();
});

test("an append of the old owner in flight when the fence lands is refused by the store and never acknowledged", async (t) => {
  const cluster = await streamOnA();
  cluster.cutOffFromMetadata('a');
  cluster.holdSegmentWrites('a');
  const inFlight = cluster.node('a').append('s', ['in-flight']);
  await cluster.until(() => cluster.heldWrites('a') === 1, 'the segment write to be on its way');
  await failOver(cluster, 'a');
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  cluster.releaseSegmentWrites('a');
  await t.throwsAsync(inFlight, { instanceOf: StreamFencedError });
  t.deepEqual(await bodies(cluster), ['p:0', 'p:1', 'p:2']);
  t.like(await cluster.node('b').append('s', ['next']), { first: 3 });
  await cluster.stopAll();
});

test("when the old owner's write wins the race for the key, it is part of the stream and the fence goes after it", async (t) => {
  const cluster = await streamOnA();
  cluster.cutOffFromMetadata('a');
  const b = cluster.node('b');
  cluster.holdSegmentWrites('b');
  await failOver(cluster, 'a');
  // b has listed the chain (tail 3) and its fence is on its way; a's append lands first.
  await cluster.until(() => cluster.heldWrites('b') === 1, "b's fence to be on its way");
  const acked = await cluster.node('a').append('s', ['won']);
  t.like(acked, { epoch: 1, first: 3 });
  cluster.releaseSegmentWrites('b');
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  t.is(b.session('s')!.tail, 4, 'the record a acknowledged is below the new tail');
  const fence = await readSegment(cluster.store, segmentKey('s', 4));
  t.like(fence, { epoch: 2, first: 4, records: [], fence: true });
  await t.throwsAsync(cluster.node('a').append('s', ['lost']), { instanceOf: StreamFencedError });
  t.like(await b.append('s', ['next']), { first: 4 });
  t.deepEqual(await bodies(cluster), ['p:0', 'p:1', 'p:2', 'won', 'next']);
  await cluster.stopAll();
});

test('the returning node learns it lost the streams, drops their sessions, and stays empty', async (t) => {
  const cluster = await streamOnA();
  cluster.cutOffFromMetadata('a');
  await failOver(cluster, 'a');
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  await t.throwsAsync(cluster.node('a').append('s', ['zombie']), { instanceOf: StreamFencedError });
  cluster.reconnect('a');
  await cluster.until(() => cluster.node('a').localStreams().length === 0, 'a to forget s');
  await t.throwsAsync(cluster.node('a').append('s', ['late']), { message: /owned by node b/ });
  await cluster.until(() => cluster.serving('s'), 's still served by b');
  t.is(cluster.state.stream('s')!.owner, 'b');
  await cluster.stopAll();
});

test('records a crashed owner logged but never stored are dropped at its restart when the stream was taken over', async (t) => {
  const cluster = await streamOnA();
  cluster.holdSegmentWrites('a');
  const lost = cluster.node('a').append('s', ['logged-only']);
  await cluster.until(() => cluster.heldWrites('a') === 1, 'the batch to be logged and on its way');
  cluster.crash('a');
  await t.throwsAsync(lost);
  cluster.dropSegmentWrites('a');
  await failOver(cluster, 'a');
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  await cluster.node('b').append('s', ['b-0']);
  // a comes back: its WAL holds 'logged-only' at offset 3, where b's fence and records are now.
  const a = await cluster.restart('a');
  await cluster.until(() => a.localStreams().length === 0, 'a to settle what it recovered');
  t.deepEqual(await bodies(cluster), ['p:0', 'p:1', 'p:2', 'b-0']);
  t.is(a.session('s'), undefined);
  await cluster.stopAll();
});

test('a planned transfer after a takeover steps over the fence; epochs keep growing', async (t) => {
  const cluster = await streamOnA();
  await cluster.addNode('c');
  cluster.crash('a');
  await failOver(cluster, 'a');
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  // b writes nothing at its epoch: c will open at offset 3, where b's fence is.
  await cluster.must({ type: 'transfer', stream: 's', target: 'c' });
  await cluster.settled();
  await cluster.until(() => cluster.serving('s'), 'c to open s');
  t.like(cluster.state.stream('s')!, { owner: 'c', epoch: 3, tail: 3 });
  t.is(cluster.state.stream('s')!.takeover, undefined, "b's close made the tail exact again");
  t.like(await cluster.node('c').append('s', ['c-0']), { epoch: 3, first: 3 });
  t.deepEqual(await bodies(cluster, 'c'), ['p:0', 'p:1', 'p:2', 'c-0']);
  await cluster.stopAll();
});

test('a second failover before the first new owner served fences both earlier owners', async (t) => {
  const cluster = await streamOnA();
  await cluster.addNode('c');
  cluster.cutOffFromMetadata('a');
  await failOver(cluster, 'a');
  await cluster.until(() => cluster.serving('s'), 'b to take s over');
  await cluster.node('b').append('s', ['b-0']);
  cluster.cutOffFromMetadata('b');
  await failOver(cluster, 'b');
  t.like(cluster.state.stream('s')!, { owner: 'c', epoch: 3 });
  await cluster.until(() => cluster.serving('s'), 'c to take s over');
  t.is(cluster.node('c').session('s')!.tail, 4);
  await t.throwsAsync(cluster.node('a').append('s', ['a-late']), { instanceOf: StreamFencedError });
  await t.throwsAsync(cluster.node('b').append('s', ['b-late']), { instanceOf: StreamFencedError });
  t.like(await cluster.node('c').append('s', ['c-0']), { epoch: 3, first: 4 });
  t.deepEqual(await bodies(cluster, 'c'), ['p:0', 'p:1', 'p:2', 'b-0', 'c-0']);
  await cluster.stopAll();
});

test("a transfer from a taken-over stream's new owner before it opened closes at the tail found in the store, not the metadata's stale one", async (t) => {
  const cluster = await streamOnA();
  await cluster.addNode('c');
  cluster.crash('a');
  await cluster.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  // Both land before b's watcher looks: b owns a takeover it never opened and must hand it on.
  const failover = cluster.consensus.propose({ type: 'failover', node: 'a' });
  const transfer = cluster.consensus.propose({ type: 'transfer', stream: 's', target: 'c' });
  t.like((await failover).result, { ok: true, moved: 1 });
  t.like((await transfer).result, { ok: true });
  await cluster.until(() => cluster.state.stream('s')!.owner === 'c' && cluster.serving('s'), 's to reach c');
  const c = cluster.node('c');
  t.is(c.session('s')!.tail, 3, "the close recorded the tail b's claim found (the metadata said 0)");
  t.like(await c.append('s', ['p:3'], { id: 'p', seq: 3 }), { first: 3, duplicate: false });
  t.deepEqual(await bodies(cluster, 'c'), ['p:0', 'p:1', 'p:2', 'p:3']);
  await cluster.stopAll();
});
