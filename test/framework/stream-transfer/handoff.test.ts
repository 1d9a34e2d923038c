import test from 'ava';
import { HandoffTimeoutError, NotOwnerError, StreamNotFoundError } from '@baton/stream-transfer/internal/errors.js';
import { Cluster } from './cluster-fixture.js';

async function twoNodes(): Promise<Cluster> {
  const cluster = new Cluster();
  await cluster.addNode('a');
  await cluster.addNode('b');
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 'stream s open on a');
  return cluster;
}

test('the owner pre-warms a created stream; appends are acknowledged once durable and read back in order', async (t) => {
  const cluster = await twoNodes();
  const a = cluster.node('a');
  const first = await a.append('s', ['r0', 'r1']);
  const second = await a.append('s', ['r2']);
  t.like(first, { stream: 's', epoch: 1, first: 0, count: 2, duplicate: false });
  t.like(second, { first: 2, count: 1 });
  t.deepEqual(await cluster.node('b').read('s', 0, 10), [
    { offset: 0, body: 'r0' },
    { offset: 1, body: 'r1' },
    { offset: 2, body: 'r2' },
  ]);
  t.deepEqual(await a.read('s', 1, 1), [{ offset: 1, body: 'r1' }]);
  await cluster.stopAll();
});

test('a transfer closes on the source at E, completes, and the target opens at E+1 before any request', async (t) => {
  const cluster = await twoNodes();
  await cluster.node('a').append('s', ['x', 'y']);
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.settled();
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2, state: 'open', tail: 2 });
  await cluster.until(() => cluster.serving('s'), 'the target to pre-warm');
  const session = cluster.node('b').session('s')!;
  t.is(session.epoch, 2, 'opened at the next epoch');
  t.is(session.tail, 2, 'continues at the closed tail');
  t.like(await cluster.node('b').append('s', ['z']), { epoch: 2, first: 2 });
  t.deepEqual(
    (await cluster.node('a').read('s', 0, 10)).map((r) => r.body),
    ['x', 'y', 'z'],
  );
  const log = cluster.consensus.log().map((e) => e.command.type);
  t.deepEqual(log.slice(log.indexOf('transfer')), ['transfer', 'close', 'complete'], 'no node-to-node call: only metadata steps');
  await cluster.stopAll();
});

test('mid-handoff, any node other than the target answers 409 naming the owner-to-be, its address and epoch', async (t) => {
  const cluster = await twoNodes();
  await cluster.addNode('c');
  cluster.consensus.hold();
  const transfer = cluster.consensus.propose({ type: 'transfer', stream: 's', target: 'b' });
  cluster.consensus.release();
  await transfer;
  // Freeze the handoff right after the pending record landed: the source's close waits.
  cluster.consensus.hold();
  for (const node of ['a', 'c']) {
    const error = await t.throwsAsync(cluster.node(node).append('s', ['late']), { instanceOf: NotOwnerError });
    t.like(error, { owner: 'b', address: 'http://b.test', epoch: 2, transferring: true });
  }
  cluster.consensus.release();
  await cluster.settled();
  await cluster.stopAll();
});

test('on the target, an append parks until the transfer settles, then succeeds', async (t) => {
  const cluster = await twoNodes();
  cluster.consensus.hold();
  const pending = cluster.consensus.propose({ type: 'transfer', stream: 's', target: 'b' });
  cluster.consensus.release();
  await pending;
  cluster.consensus.hold();
  let done = false;
  const parked = cluster.node('b').append('s', ['waited']).finally(() => (done = true));
  await cluster.quiesce();
  cluster.clock.advance(2_000);
  await cluster.quiesce();
  t.false(done, 'still parked while the handoff is held');
  cluster.consensus.release();
  await cluster.until(() => done, 'the parked append to finish');
  t.like(await parked, { epoch: 2, first: 0 });
  await cluster.stopAll();
});

test('a parked append gives up after 10 seconds with a retry hint', async (t) => {
  const cluster = await twoNodes();
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  // The source is down, so the handoff cannot settle.
  cluster.crash('a');
  const started = cluster.clock.now();
  const parked = cluster.node('b').append('s', ['x']);
  const outcome = parked.then(
    () => undefined,
    (error: unknown) => error,
  );
  await cluster.until(() => cluster.clock.now() - started >= 10_050, 'ten virtual seconds', 20_000, 50);
  const error = await outcome;
  t.true(error instanceof HandoffTimeoutError);
  t.like(error, { retryAfterSeconds: 1 });
  t.true((error as HandoffTimeoutError).waitedMs >= 10_000);
  t.true((error as HandoffTimeoutError).waitedMs < 10_100);
  await cluster.stopAll();
});

test('a request for a stream owned elsewhere (no transfer) is refused with the owner, and an unknown stream with 404', async (t) => {
  const cluster = await twoNodes();
  const error = await t.throwsAsync(cluster.node('b').append('s', ['x']), { instanceOf: NotOwnerError });
  t.like(error, { owner: 'a', address: 'http://a.test', epoch: 1, transferring: false });
  await t.throwsAsync(cluster.node('a').append('nope', ['x']), { instanceOf: StreamNotFoundError });
  await t.throwsAsync(cluster.node('a').read('nope', 0, 1), { instanceOf: StreamNotFoundError });
  await cluster.stopAll();
});

test('a retried (producer, seq) is not appended twice, including across a handoff', async (t) => {
  const cluster = await twoNodes();
  const a = cluster.node('a');
  const original = await a.append('s', ['p1'], { id: 'prod', seq: 1 });
  t.like(await a.append('s', ['p1'], { id: 'prod', seq: 1 }), { first: original.first, count: 1, duplicate: true });
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.settled();
  await cluster.until(() => cluster.serving('s'), 'b serving');
  const b = cluster.node('b');
  t.like(await b.append('s', ['p1'], { id: 'prod', seq: 1 }), { first: original.first, duplicate: true });
  t.like(await b.append('s', ['p2'], { id: 'prod', seq: 2 }), { first: 1, duplicate: false });
  await t.throwsAsync(b.append('s', ['old'], { id: 'prod', seq: 0 }), { message: /seq 0 .*seq 2 was already appended/ });
  t.deepEqual((await b.read('s', 0, 10)).map((r) => r.body), ['p1', 'p2']);
  await cluster.stopAll();
});

test('concurrent retries of one producer batch share one append', async (t) => {
  const cluster = await twoNodes();
  const a = cluster.node('a');
  const [one, two] = await Promise.all([
    a.append('s', ['once'], { id: 'p', seq: 7 }),
    a.append('s', ['once'], { id: 'p', seq: 7 }),
  ]);
  t.is(one.first, two.first);
  t.deepEqual([one.duplicate, two.duplicate], [false, true]);
  t.is((await a.read('s', 0, 10)).length, 1);
  await cluster.stopAll();
});

test('appends in flight when the transfer lands are flushed before the close; none is lost or duplicated', async (t) => {
  const cluster = await twoNodes();
  const a = cluster.node('a');
  const inFlight = Array.from({ length: 20 }, (_, i) => a.append('s', [`m${i}`]).then(
    (r) => ({ ok: true as const, r }),
    (error: unknown) => ({ ok: false as const, error }),
  ));
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  const outcomes = await Promise.all(inFlight);
  await cluster.settled();
  const acked = outcomes.filter((o) => o.ok).map((o) => (o.ok ? o.r.first : -1));
  t.is(acked.length, 20, 'appends accepted before the pending record are all acknowledged');
  const records = await a.read('s', 0, 100);
  t.deepEqual(records.map((r) => r.offset), records.map((_, i) => i), 'offsets have no gaps');
  for (const offset of acked) t.truthy(records.find((r) => r.offset === offset), `acknowledged offset ${offset} is readable`);
  t.is(cluster.state.stream('s')!.tail, records.length, 'the close recorded the exact tail');
  await cluster.stopAll();
});
