import test from 'ava';
import { contractFetch } from '../../support/api-contract.js';
import { StreamClient } from '@baton/client';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { startStreamNode } from '@baton/host-stream-node/internal/host.js';
import { eventually } from '../eventually.js';

const TOKEN = 'raft-admin';

test('a stream node on the Raft consensus keeps its metadata, WAL and records across a restart', async (t) => {
  const dir = await makeTempDir('stream-node-raft');
  t.teardown(() => dir.remove());
  const config = {
    node: {
      self: 'n1',
      http: { port: 0 },
      wal: { kind: 'file', dir: `${dir.path}/wal` },
      tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
    },
    consensus: { use: 'raft', options: { member: 'n1', voters: ['n1'], dataDir: `${dir.path}/raft`, tickMs: 10 } },
    peerTransport: { use: 'raft-http-transport', options: { member: 'n1', peers: {} } },
    objectStore: { use: 'fs-object-store', options: { dir: `${dir.path}/objects` } },
    // Its audit trail (files under <dataDir>/audit) beside the rest, not in the working directory.
    dataDir: dir.path,
    log: { level: 'silent' },
  };
  let { host, node } = await startStreamNode(config);
  let client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration through raft');
  await client.createStream('s');
  await eventually(() => node.node.session('s')?.writable === true, 'pre-warm');
  t.like(await client.append('s', ['before']), { first: 0, epoch: 1 });
  await host.stop();

  ({ host, node } = await startStreamNode(config));
  t.teardown(() => host.stop());
  client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(() => node.node.session('s')?.writable === true, 'reopen after restart');
  t.like(await client.describe('s'), { owner: 'n1', epoch: 2, state: 'open', tail: 1 });
  t.like(await client.append('s', ['after']), { first: 1, epoch: 2 });
  t.deepEqual((await client.read('s')).records.map((r) => r.body), ['before', 'after']);
});

test('a raft config without a peer transport fails at build, naming what is missing', async (t) => {
  const { streamNodeHostBuilder } = await import('@baton/host-stream-node/internal/host.js');
  t.throws(
    () =>
      streamNodeHostBuilder({
        node: { self: 'n1', wal: { kind: 'memory' } },
        consensus: { use: 'raft', options: { member: 'n1', voters: ['n1'] } },
        objectStore: { use: 'memory-object-store' },
      }).build(),
    { message: /PeerTransport/ },
  );
});
