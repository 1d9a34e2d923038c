import test from 'ava';
import { ApiCluster, dataCall } from './api-fixture.js';

async function started(t: { teardown(fn: () => Promise<void>): void }): Promise<ApiCluster> {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  await api.addNode('a');
  await api.addNode('b');
  await api.addNode('c');
  await api.cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await api.cluster.until(() => api.cluster.serving('s'), 's open on a');
  return api;
}

const append = (url: string, stream: string, json: unknown) =>
  dataCall(`${url}/v1/streams/${stream}/records`, { method: 'POST', json });

test('POST records appends on the owner and answers offsets and epoch; GET reads them back from any node', async (t) => {
  const api = await started(t);
  const answer = await append(api.url('a'), 's', { records: [{ body: 'one' }, { body: 'two' }] });
  t.is(answer.status, 200);
  t.like(answer.body, { stream: 's', epoch: 1, first: 0, count: 2, offsets: [0, 1], duplicate: false, node: 'a' });
  const read = await dataCall(`${api.url('c')}/v1/streams/s/records?from=1&limit=5`);
  t.is(read.status, 200);
  t.deepEqual(read.body, { stream: 's', from: 1, records: [{ offset: 1, body: 'two' }], next: 2 });
  const all = await dataCall(`${api.url('b')}/v1/streams/s/records`);
  t.deepEqual(all.body.records.map((r: { body: string }) => r.body), ['one', 'two']);
});

test('GET a stream describes owner, address, epoch, state and tail', async (t) => {
  const api = await started(t);
  await append(api.url('a'), 's', { records: [{ body: 'x' }] });
  const onOwner = await dataCall(`${api.url('a')}/v1/streams/s`);
  t.is(onOwner.status, 200);
  t.like(onOwner.body, { stream: 's', owner: 'a', address: api.url('a'), epoch: 1, state: 'open', tail: 1 });
  t.like((await dataCall(`${api.url('b')}/v1/streams/s`)).body, { owner: 'a', epoch: 1 });
});

test('a retried (producer, seq) answers the original offsets; an older seq is a 409', async (t) => {
  const api = await started(t);
  const batch = { records: [{ body: 'p' }], producer: { id: 'prod-1', seq: 5 } };
  const first = await append(api.url('a'), 's', batch);
  const retry = await append(api.url('a'), 's', batch);
  t.like(retry.body, { first: first.body.first, duplicate: true });
  const stale = await append(api.url('a'), 's', { ...batch, producer: { id: 'prod-1', seq: 4 } });
  t.is(stale.status, 409);
  t.like(stale.body, { type: 'urn:baton:problem:stale-producer-sequence', producer: 'prod-1', seq: 4, last_seq: 5 });
  t.is(stale.headers.get('content-type'), 'application/problem+json');
});

test('a non-owner answers 409 naming the owner, its address and epoch', async (t) => {
  const api = await started(t);
  const answer = await append(api.url('b'), 's', { records: [{ body: 'x' }] });
  t.is(answer.status, 409);
  t.like(answer.body, { type: 'urn:baton:problem:not-owner', stream: 's', owner: 'a', address: api.url('a'), epoch: 1, transferring: false });
});

test('while a transfer is pending, a node other than the target answers 409 naming the owner-to-be and its epoch', async (t) => {
  const api = await started(t);
  const { cluster } = api;
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  cluster.consensus.hold(); // the handoff cannot complete while held
  for (const node of ['a', 'c']) {
    const answer = await append(api.url(node), 's', { records: [{ body: 'x' }] });
    t.is(answer.status, 409, `node ${node}`);
    t.like(answer.body, { owner: 'b', address: api.url('b'), epoch: 2, transferring: true });
  }
  cluster.consensus.release();
  await cluster.settled();
});

test('on the target, an append parks and succeeds once the transfer settles', async (t) => {
  const api = await started(t);
  const { cluster } = api;
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  cluster.consensus.hold();
  const parked = append(api.url('b'), 's', { records: [{ body: 'after' }] });
  await cluster.quiesce(20);
  cluster.consensus.release();
  const answer = await parked;
  t.is(answer.status, 200);
  t.like(answer.body, { epoch: 2, node: 'b' });
});

test('an append parked past 10 seconds answers 503 with Retry-After', async (t) => {
  const api = await started(t);
  const { cluster } = api;
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  cluster.crash('a'); // the source is gone: the handoff cannot settle
  let answered = false;
  const parked = append(api.url('b'), 's', { records: [{ body: 'x' }] }).finally(() => (answered = true));
  // The park's 10 s start when the request reaches the node, which on a loaded machine may be
  // after the virtual clock has already moved: the budget leaves room for that, and the answer's
  // own waited_ms says how long it was parked.
  await cluster.until(() => answered, 'the parked request to answer', 60_000, 100);
  const answer = await parked;
  t.is(answer.status, 503);
  t.is(answer.headers.get('retry-after'), '1');
  t.like(answer.body, { type: 'urn:baton:problem:handoff-in-progress', stream: 's' });
  t.true(answer.body.waited_ms >= 10_000);
});

test('unknown streams answer 404 on every data route', async (t) => {
  const api = await started(t);
  for (const answer of [
    await append(api.url('a'), 'ghost', { records: [{ body: 'x' }] }),
    await dataCall(`${api.url('a')}/v1/streams/ghost/records`),
    await dataCall(`${api.url('a')}/v1/streams/ghost`),
  ]) {
    t.is(answer.status, 404);
    t.is(answer.body.type, 'urn:baton:problem:stream-not-found');
  }
});

test('every invalid input answers 400 with a reason, never a 500', async (t) => {
  const api = await started(t);
  const url = api.url('a');
  const cases: [string, Promise<{ status: number; body: any }>, RegExp][] = [
    ['bad stream id', append(url, 'bad%20id', { records: [{ body: 'x' }] }), /stream id/],
    ['no records', append(url, 's', { records: [] }), /at least one record/],
    ['missing records', append(url, 's', {}), /records/],
    ['body not a string', append(url, 's', { records: [{ body: 3 }] }), /body must be a string/],
    ['unknown field', append(url, 's', { records: [{ body: 'x' }], extra: 1 }), /extra/],
    ['negative seq', append(url, 's', { records: [{ body: 'x' }], producer: { id: 'p', seq: -1 } }), /seq must be >= 0/],
    ['bad producer id', append(url, 's', { records: [{ body: 'x' }], producer: { id: '', seq: 1 } }), /producer id/],
    ['too many records', append(url, 's', { records: Array.from({ length: 1001 }, () => ({ body: 'x' })) }), /at most 1000/],
    ['negative from', dataCall(`${url}/v1/streams/s/records?from=-1`), /from must be >= 0/],
    ['zero limit', dataCall(`${url}/v1/streams/s/records?limit=0`), /limit must be >= 1/],
    ['text limit', dataCall(`${url}/v1/streams/s/records?limit=ten`), /limit/],
    ['misspelt parameter', dataCall(`${url}/v1/streams/s/records?offset=5`), /Unrecognized key: "offset"/],
    [
      'malformed JSON',
      dataCall(`${url}/v1/streams/s/records`, { method: 'POST', body: '{"records":', headers: { 'Content-Type': 'application/json' } }),
      /not valid JSON/,
    ],
  ];
  for (const [name, pending, reason] of cases) {
    const answer = await pending;
    t.is(answer.status, 400, name);
    t.regex(answer.body.detail, reason, name);
  }
  const wrongType = await dataCall(`${url}/v1/streams/s/records`, { method: 'POST', body: 'x', headers: { 'Content-Type': 'text/plain' } });
  t.is(wrongType.status, 415);
  const huge = await append(url, 's', { records: [{ body: 'x'.repeat(3 * 1024 * 1024) }] });
  t.is(huge.status, 413);
});
