import test from 'ava';
import { streamNodeClient } from '@baton/client/internal/clients.js';
import { OwnerRoutes } from '@baton/client/internal/owner-routes.js';
import { WatchRefusedError, watchAuthorityOwnership, watchStreamOwnership, type StreamOwnership } from '@baton/client/internal/ownership-watch.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { sharedConsensus } from '@baton/testing/internal/fakes/shared-consensus.js';
import { eventually } from '../../hosts/eventually.js';
import { ADMIN, WRITER, startNode, transfer } from '../../hosts/authority-node/node-harness.js';

const TOKEN = 'feed-admin';
const READER = 'feed-reader';

/** Two stream nodes on one metadata consensus. */
async function twoStreamNodes(t: import('ava').ExecutionContext) {
  const inner = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  const shared = sharedConsensus(inner);
  const config = (self: string) => ({
    node: {
      self,
      http: { port: 0 },
      wal: { kind: 'memory' },
      tokens: [
        { token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] },
        { token: READER, principal: 'reader', scopes: ['stream:read:orders-*'] },
      ],
    },
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: { level: 'silent' },
  });
  const first = streamNodeHostBuilder(config('n1')).value(METADATA_CONSENSUS, shared).build();
  await first.start();
  const second = streamNodeHostBuilder(config('n2')).value(METADATA_CONSENSUS, shared).value(OBJECT_STORE, first.get(OBJECT_STORE)).build();
  await second.start();
  t.teardown(async () => {
    await second.stop();
    await first.stop();
  });
  const n1 = first.get(STREAM_NODE);
  const n2 = second.get(STREAM_NODE);
  const admin = streamNodeClient({ baseUrl: n1.url, token: TOKEN });
  await eventually(async () => ((await admin.GET('/v1/admin/nodes')).data?.nodes.length ?? 0) === 2, 'both nodes registered');
  return { n1, n2, admin };
}

test('a stream feed sends the owner at once, then the pending target, then the new owner and epoch; the producer is routed to the target first', async (t) => {
  const { n1, n2, admin } = await twoStreamNodes(t);
  await admin.POST('/v1/admin/streams', { body: { stream: 'orders-1', node: 'n1' } });
  const routes = new OwnerRoutes();
  const seen: StreamOwnership[] = [];
  // Watched at the node that is not the owner: every node's feed follows the metadata.
  const watch = watchStreamOwnership('orders-1', { nodes: [n2.url], token: READER, routes });
  t.teardown(() => watch.close());
  const routed: (string | undefined)[] = [];
  watch.onEvent((event) => {
    seen.push(event);
    routed.push(routes.get('/v1/streams/orders-1/records'));
  });
  const first = await watch.until(() => true);
  t.like(first, { stream: 'orders-1', owner: 'n1', address: n1.url, epoch: 1, state: 'open', pending_target: null, pending_target_address: null });
  t.is(routes.get('/v1/streams/orders-1/records'), new URL(n1.url).origin);

  const moved = await admin.POST('/v1/admin/transfers', { body: { stream: 'orders-1', target: 'n2' } });
  t.is(moved.response.status, 202);
  await watch.until((e) => e.owner === 'n2' && e.pending_target === null);
  const pending = seen.find((e) => e.pending_target === 'n2');
  t.like(pending, { owner: 'n1', epoch: 1, pending_target: 'n2', pending_target_address: n2.url });
  t.like(seen.at(-1), { owner: 'n2', address: n2.url, epoch: 2, pending_target: null });
  t.deepEqual(
    seen.map((e) => `${e.owner}@${e.epoch} ${e.state} >${e.pending_target ?? '-'}`),
    // The source's close is recorded before the target opens at the next epoch.
    ['n1@1 open >-', 'n1@1 open >n2', 'n1@1 closed >n2', 'n2@2 open >-'],
    'each change once, in order, nothing repeated',
  );
  // Appends stay with the source while it serves, and go to the target from its close on.
  const [at1, at2] = [new URL(n1.url).origin, new URL(n2.url).origin];
  t.deepEqual(routed, [at1, at1, at2, at2]);

  // The producer's first append goes where the feed pointed, never to the old owner.
  const sent: string[] = [];
  const producer = streamNodeClient({
    baseUrl: n1.url,
    token: TOKEN,
    routes,
    fetch: (request) => {
      sent.push(new URL(request.url).origin);
      return fetch(request);
    },
  });
  const appended = await producer.POST('/v1/streams/{stream}/records', { params: { path: { stream: 'orders-1' } }, body: { records: [{ body: 'a' }] } });
  t.is(appended.response.status, 200);
  t.like(appended.data, { node: 'n2', epoch: 2 });
  t.deepEqual(sent, [new URL(n2.url).origin]);
});

test('a stream feed answers JSON without Accept: text/event-stream; an unknown stream or a stream outside the scope is refused for good', async (t) => {
  const { n1, admin } = await twoStreamNodes(t);
  await admin.POST('/v1/admin/streams', { body: { stream: 'orders-2', node: 'n1' } });
  await admin.POST('/v1/admin/streams', { body: { stream: 'billing', node: 'n1' } });
  const once = await fetch(`${n1.url}/v1/streams/orders-2/ownership`, { headers: { authorization: `Bearer ${READER}` } });
  t.is(once.status, 200);
  t.is(once.headers.get('etag'), '"1"');
  t.like(await once.json(), { stream: 'orders-2', owner: 'n1', epoch: 1, pending_target: null });

  const unknown = watchStreamOwnership('orders-9', { nodes: [n1.url], token: READER });
  const gone = await t.throwsAsync(unknown.until(() => true), { instanceOf: WatchRefusedError });
  t.is(gone.status, 404);
  const outside = watchStreamOwnership('billing', { nodes: [n1.url], token: READER });
  const denied = await t.throwsAsync(outside.until(() => true), { instanceOf: WatchRefusedError });
  t.is(denied.status, 403);
  const anonymous = await fetch(`${n1.url}/v1/streams/orders-2/ownership`, { headers: { accept: 'text/event-stream' } });
  t.is(anonymous.status, 401);
  await anonymous.arrayBuffer();
});

test('an authority feed sends home and epoch at once, then the registered transfer, then the new home and epoch with its members', async (t) => {
  const n = await startNode();
  t.teardown(() => n.host.stop());
  const placed = await fetch(`${n.control}/availability/v1/commands`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'transfer_authority', authority: 'proj', target: 'east' }),
  });
  t.is(placed.status, 200);
  await placed.arrayBuffer();
  const routes = new OwnerRoutes();
  const watch = watchAuthorityOwnership('proj', { nodes: [n.publicUrl], token: WRITER, routes });
  t.teardown(() => watch.close());
  const seen: { home: string; epoch: number; pending_target: string | null }[] = [];
  watch.onEvent((event) => seen.push(event));
  // The harness's roster names a placeholder public address for every member.
  t.like(await watch.until(() => true), { authority: 'proj', home: 'east', epoch: 1, pending_target: null, frozen: false, home_urls: ['http://127.0.0.1:9'] });

  n.probe.answer('west', 0);
  const moved = await fetch(`${n.control}/availability/v1/transfers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(transfer),
  });
  t.is(moved.status, 200);
  await moved.arrayBuffer();
  const landed = await watch.until((e) => e.home === 'west');
  t.like(landed, { home: 'west', epoch: 2, pending_target: null, frozen: false, home_urls: ['http://127.0.0.1:9'] });
  t.true(seen.some((e) => e.home === 'east' && e.pending_target === 'west'), 'the registered transfer was seen before the commit');
  t.is(routes.get('/availability/v1/authorities/proj/writes'), 'http://127.0.0.1:9');

  const unknown = watchAuthorityOwnership('nothing-here', { nodes: [n.publicUrl], token: WRITER });
  const refused = await t.throwsAsync(unknown.until(() => true), { instanceOf: WatchRefusedError });
  t.is(refused.status, 404);
});
