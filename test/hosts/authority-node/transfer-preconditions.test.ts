import test from 'ava';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { ADMIN, READER, startNode, transfer } from './node-harness.js';

type Node = Awaited<ReturnType<typeof startNode>>;

async function withNode(fn: (node: Node) => Promise<void>, overrides: Parameters<typeof startNode>[0] = {}) {
  const node = await startNode(overrides);
  try {
    await fn(node);
  } finally {
    await node.host.stop();
  }
}

async function establish(n: Node, home = 'east') {
  const res = await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: home } });
  if (res.status !== 200) throw new Error(`establish answered ${res.status}: ${JSON.stringify(res.body)}`);
}

const etag = async (n: Node) => (await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).headers.get('etag');

test('GET of an authority answers ETag "<epoch>"; a planned transfer under a stale If-Match is 412 naming home and epoch and registers nothing; under the current one it commits', (t) =>
  withNode(async (n) => {
    await establish(n);
    t.is(await etag(n), '"1"');
    const stale = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'guarded', body: transfer, headers: { 'if-match': '"2"' } });
    t.is(stale.status, 412);
    t.is(stale.headers.get('content-type'), 'application/problem+json');
    t.like(stale.body, { code: 'precondition_failed', authority: 'proj', owner: 'east', home: 'east', epoch: 1 });
    t.is((await n.call('GET', '/availability/v1/transfers/proj', { token: READER })).status, 404);
    const staleBody = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: { ...transfer, expected_epoch: 0 } });
    t.is(staleBody.status, 412);

    n.probe.answer('west', 0);
    const moved = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'guarded-2', body: transfer, headers: { 'if-match': await etag(n) ?? '' } });
    t.is(moved.status, 200, JSON.stringify(moved.body));
    t.like(moved.body, { id: 'guarded-2', source: 'east', target: 'west', epoch: 2 });
    t.is(await etag(n), '"2"');
    // The same key and request replays the sealed record, though the epoch it guarded has moved on.
    const replay = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'guarded-2', body: transfer, headers: { 'if-match': '"1"' } });
    t.is(replay.status, 200);
    t.deepEqual(replay.body, moved.body);
    // Another operator who read epoch 1 is refused: the authority lives in west at epoch 2 now.
    const late = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: { ...transfer, source: 'west', target: 'east', expected_epoch: 1 } });
    t.is(late.status, 412);
    t.like(late.body, { owner: 'west', epoch: 2 });
  }));

test('a malformed If-Match, or one that disagrees with expected_epoch, is a 400 and registers nothing', (t) =>
  withNode(async (n) => {
    await establish(n);
    for (const bad of ['1', 'W/"1"', '"x"', '"1", "2"']) {
      const res = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: transfer, headers: { 'if-match': bad } });
      t.is(res.status, 400, bad);
      t.is(res.headers.get('content-type'), 'application/problem+json', bad);
    }
    const disagreeing = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: { ...transfer, expected_epoch: 2 }, headers: { 'if-match': '"1"' } });
    t.is(disagreeing.status, 400);
    t.is((await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: { ...transfer, expected_epoch: 'one' } })).status, 400);
    t.is((await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'west' }, headers: { 'if-match': 'nope' } })).status, 400);
    t.is((await n.call('GET', '/availability/v1/transfers/proj', { token: READER })).status, 404);
    t.is(await etag(n), '"1"');
  }));

test('the raw transfer_authority command under a stale If-Match is 412 and moves nothing; under the current epoch it fails the authority over', (t) => {
  const clock = new VirtualClock();
  return withNode(
    async (n) => {
      await establish(n, 'west');
      // west-1 never reports: the tracker calls it Dead, which the raw move requires.
      clock.advance(30_000);
      const body = { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' };
      const stale = await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'fo-stale', body, headers: { 'if-match': '"5"' } });
      t.is(stale.status, 412, JSON.stringify(stale.body));
      t.like(stale.body, { owner: 'west', epoch: 1 });
      t.is(await etag(n), '"1"');
      const moved = await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'fo-1', body: { ...body, expected_epoch: 1 } });
      t.is(moved.status, 200, JSON.stringify(moved.body));
      t.like(moved.body, { home: 'east', epoch: 2, replayed: false });
      t.is((await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'fo-1', body })).status, 422);
    },
    { clock },
  );
});
