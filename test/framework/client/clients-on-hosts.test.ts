import test from 'ava';
import { authorityControlClient, authorityPublicClient, streamNodeClient } from '@baton/client/internal/clients.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { sharedConsensus } from '@baton/testing/internal/fakes/shared-consensus.js';
import { contractFetch } from '../../support/api-contract.js';
import { ADMIN, WRITER, startNode, transfer } from '../../hosts/authority-node/node-harness.js';

const TOKEN = 'client-admin';

async function eventually(condition: () => Promise<boolean> | boolean, what: string, ms = 10_000): Promise<void> {
  const clock = new SystemClock();
  const deadline = clock.now() + ms;
  while (!(await condition())) {
    if (clock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.sleep(10);
  }
}

/** Two stream nodes on one metadata consensus, each answer checked against the published document. */
async function twoStreamNodes(t: import('ava').ExecutionContext) {
  const inner = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  const shared = sharedConsensus(inner);
  const config = (self: string) => ({
    node: { self, http: { port: 0 }, wal: { kind: 'memory' }, tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }] },
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
  return { n1: first.get(STREAM_NODE), n2: second.get(STREAM_NODE) };
}

test('the stream client, pointed at a node that does not own the stream, follows the not-owner hint and appends at the owner', async (t) => {
  const { n1, n2 } = await twoStreamNodes(t);
  const sent: string[] = [];
  const checked = contractFetch();
  const fetch = (request: Request) => {
    sent.push(`${request.method} ${request.url}`);
    return checked(request);
  };
  const client = streamNodeClient({ baseUrl: n2.url, token: TOKEN, fetch });
  await eventually(async () => ((await client.GET('/v1/admin/nodes', {})).data?.nodes.length ?? 0) === 2, 'both nodes registered');
  const created = await client.POST('/v1/admin/streams', { body: { stream: 'orders', node: 'n1' } });
  t.is(created.response.status, 201);
  t.is(created.data?.owner, 'n1');
  await eventually(() => n1.node.session('orders')?.writable === true, 'orders open on n1');

  const appended = await client.POST('/v1/streams/{stream}/records', { params: { path: { stream: 'orders' } }, body: { records: [{ body: 'first' }] } });
  t.is(appended.response.status, 200);
  t.like(appended.data, { stream: 'orders', node: 'n1', offsets: [0] });
  const appends = sent.filter((s) => s.startsWith('POST') && s.endsWith('/v1/streams/orders/records'));
  t.deepEqual(appends, [`POST ${n2.url}/v1/streams/orders/records`, `POST ${n1.url}/v1/streams/orders/records`]);

  const read = await client.GET('/v1/streams/{stream}/records', { params: { path: { stream: 'orders' }, query: { from: 0 } } });
  t.deepEqual(read.data?.records, [{ offset: 0, body: 'first' }]);
  const missing = await client.GET('/v1/streams/{stream}', { params: { path: { stream: 'nope' } } });
  t.is(missing.response.status, 404);
  t.is(missing.error?.type, 'urn:baton:problem:stream-not-found');
});

test('the authority clients start a planned transfer under the key they minted, and a write at the old home is sent on to the new one', async (t) => {
  const n = await startNode();
  t.teardown(() => n.host.stop());
  const fetch = contractFetch();
  let minted = 0;
  const control = authorityControlClient({ baseUrl: n.control, token: ADMIN, fetch, mintKey: () => `client-key-${++minted}` });
  const placed = await control.POST('/availability/v1/commands', { body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
  t.is(placed.response.status, 200);
  t.is(placed.data?.home, 'east');
  n.probe.answer('west', 0);
  const moved = await control.POST('/availability/v1/transfers', { body: transfer });
  t.is(moved.response.status, 200);
  t.like(moved.data, { id: 'client-key-2', authority: 'proj', source: 'east', target: 'west', epoch: 2 });
  t.is(moved.response.headers.get('idempotency-key'), 'client-key-2');
  const home = await control.GET('/availability/v1/authorities/{authority}', { params: { path: { authority: 'proj' } } });
  t.like(home.data, { home: 'west', epoch: 2 });

  // East is not the home any more: the public server refuses the write naming west's member,
  // and the client sends the same write there (in this test nothing listens at west's address).
  const sentTo: string[] = [];
  const recording = async (request: Request) => {
    sentTo.push(request.url);
    return fetch(request);
  };
  const writes = authorityPublicClient({ baseUrl: n.publicUrl, token: WRITER, fetch: recording });
  await t.throwsAsync(writes.POST('/availability/v1/authorities/{authority}/writes', { params: { path: { authority: 'proj' } }, body: { operation: 'w', epoch: 2 } }));
  t.deepEqual(sentTo, [`${n.publicUrl}/availability/v1/authorities/proj/writes`, 'http://127.0.0.1:9/availability/v1/authorities/proj/writes']);
  // Told to go nowhere else (one attempt), the client returns the refusal as it is.
  const once = authorityPublicClient({ baseUrl: n.publicUrl, token: WRITER, fetch, maxAttempts: 1 });
  const refused = await once.POST('/availability/v1/authorities/{authority}/writes', { params: { path: { authority: 'proj' } }, body: { operation: 'w', epoch: 2 } });
  t.is(refused.response.status, 421);
  t.like(refused.error, { status: 421, home: 'west', home_urls: ['http://127.0.0.1:9'] });
});
