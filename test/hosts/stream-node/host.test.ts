import { stat } from 'node:fs/promises';
import test from 'ava';
import { contractFetch } from '../../support/api-contract.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { StreamClient } from '@baton/client';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { sharedConsensus } from '@baton/testing/internal/fakes/shared-consensus.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { streamNodeHostBuilder, startStreamNode } from '@baton/host-stream-node/internal/host.js';
import { defaultStreamNodeConfig } from '@baton/host-stream-node/internal/config.js';

const TOKEN = 'test-admin';

function config(self: string, extra: Record<string, unknown> = {}) {
  return {
    node: {
      self,
      http: { port: 0 },
      wal: { kind: 'memory' },
      tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
      ...extra,
    },
    // Metadata in memory: these tests share or restart nothing through the default Raft's files.
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: { level: 'silent' },
  };
}

/**
 * The shared metadata of several hosts in one process, as a durable consensus would be: the
 * host calls stop() on whatever provides the consensus token, so the hosts get a view of it
 * without lifecycle hooks, and stopping one host leaves the metadata to the others.
 */
function sharedMetadata(): LocalConsensus<StreamMetadata, StreamCommand, StreamResult> {
  return sharedConsensus(new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine()));
}

/** Waits on a condition with a real deadline (these tests talk to real servers). */
async function eventually(condition: () => Promise<boolean> | boolean, what: string, ms = 5_000): Promise<void> {
  const clock = new SystemClock();
  const deadline = clock.now() + ms;
  while (!(await condition())) {
    if (clock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.sleep(10);
  }
}

test('a stream node starts from config, registers itself, and serves the data and admin APIs', async (t) => {
  const { host, node } = await startStreamNode(config('n1', { slots: 7 }));
  t.teardown(() => host.stop());
  const client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration');
  t.like((await client.nodes()).nodes[0], { id: 'n1', address: node.url, slots: 7 });
  await client.createStream('events');
  await eventually(() => node.node.session('events')?.writable === true, 'pre-warm');
  t.like(await client.append('events', ['hello']), { first: 0, epoch: 1, node: 'n1' });
  t.deepEqual((await client.read('events')).records, [{ offset: 0, body: 'hello' }]);
});

test('two hosts sharing one metadata consensus hand a stream over, and the client follows', async (t) => {
  const shared = sharedMetadata();
  const first = streamNodeHostBuilder(config('n1')).value(METADATA_CONSENSUS, shared).build();
  await first.start();
  // One object store for both: the durable data a transfer never moves.
  const second = streamNodeHostBuilder(config('n2')).value(METADATA_CONSENSUS, shared).value(OBJECT_STORE, first.get(OBJECT_STORE)).build();
  await second.start();
  t.teardown(async () => {
    await second.stop();
    await first.stop();
  });
  const n1 = first.get(STREAM_NODE);
  const n2 = second.get(STREAM_NODE);
  const client = new StreamClient({ nodes: [n2.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 2, 'both registered');
  await client.createStream('s', 'n1');
  await eventually(() => n1.node.session('s')?.writable === true, 'pre-warm on n1');
  t.like(await client.append('s', ['one']), { node: 'n1' });
  await client.transfer('s', 'n2');
  await eventually(async () => (await client.transferStatus('s')).status === 'settled', 'handoff');
  t.like(await client.append('s', ['two']), { node: 'n2', epoch: 2, first: 1 });
  t.deepEqual((await client.read('s')).records.map((r) => r.body), ['one', 'two']);
});

test('a node with a file WAL recovers after a restart: records survive and the stream reopens at the next epoch', async (t) => {
  const dir = await makeTempDir('stream-node-host');
  t.teardown(() => dir.remove());
  const shared = sharedMetadata();
  const durable = (id: string) => ({
    ...config(id, { wal: { kind: 'file', dir: `${dir.path}/wal` } }),
    objectStore: { use: 'fs-object-store', options: { dir: `${dir.path}/objects` } },
  });
  let host = streamNodeHostBuilder(durable('n1')).value(METADATA_CONSENSUS, shared).build();
  await host.start();
  let node = host.get(STREAM_NODE);
  let client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration');
  await client.createStream('s');
  await eventually(() => node.node.session('s')?.writable === true, 'pre-warm');
  await client.append('s', ['before']);
  await host.stop();

  host = streamNodeHostBuilder(durable('n1')).value(METADATA_CONSENSUS, shared).build();
  await host.start();
  t.teardown(() => host.stop());
  node = host.get(STREAM_NODE);
  client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(() => node.node.session('s')?.writable === true, 'reopen after restart');
  t.like(shared.view().state.stream('s')!, { epoch: 2, tail: 1, owner: 'n1' });
  t.like(await client.append('s', ['after']), { epoch: 2, first: 1 });
  t.deepEqual((await client.read('s')).records.map((r) => r.body), ['before', 'after']);
});

test('node.walCompactionBytes compacts the file WAL once that many bytes were appended', async (t) => {
  const dir = await makeTempDir('stream-node-compaction');
  t.teardown(() => dir.remove());
  const host = streamNodeHostBuilder({
    ...config('n1', { wal: { kind: 'file', dir: `${dir.path}/wal` }, walCompactionBytes: 1024 }),
    objectStore: { use: 'fs-object-store', options: { dir: `${dir.path}/objects` } },
  })
    .value(METADATA_CONSENSUS, sharedMetadata())
    .build();
  await host.start();
  t.teardown(() => host.stop());
  const node = host.get(STREAM_NODE);
  const client = new StreamClient({ nodes: [node.url], token: TOKEN });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration');
  await client.createStream('s');
  await eventually(() => node.node.session('s')?.writable === true, 'pre-warm');
  const bodies = Array.from({ length: 30 }, (_, i) => `${i}`.padEnd(200, '.'));
  for (const body of bodies) await client.append('s', [body]);
  // Appended one by one, 6,000 bytes of bodies would stay in the log without a compaction.
  const size = async () => (await stat(`${dir.path}/wal/streams.wal`)).size;
  await eventually(async () => (await size()) < 4_000, 'the WAL to be compacted');
  t.true((await size()) < 4_000);
  t.deepEqual((await client.read('s')).records.map((r) => r.body), bodies);
});

test('configuration mistakes fail at build with the path at fault', (t) => {
  t.throws(() => streamNodeHostBuilder({ ...config('n1'), consensus: { use: 'zookeeper' } }), { message: /consensus\.use: unknown plugin id "zookeeper"/ });
  t.throws(() => streamNodeHostBuilder({ ...config('n1'), node: { http: { port: 0 } } }).build(), { message: /node\.self: give this node's id/ });
  t.throws(() => streamNodeHostBuilder({ ...config('n1'), node: { self: 'n1', wal: { kind: 'tape' } } }).build(), { message: /node\.wal/ });
  t.throws(() => streamNodeHostBuilder({ ...config('n1'), extra: 1 }), { message: /extra|unrecognized/i });
  t.throws(() => streamNodeHostBuilder(config('n1', { walCompactionBytes: 10 })).build(), { message: /node\.walCompactionBytes/ });
});

test('the default config composes', (t) => {
  const host = streamNodeHostBuilder(defaultStreamNodeConfig).build();
  t.true(host.has(STREAM_NODE));
  t.true(host.has(METADATA_CONSENSUS));
});
