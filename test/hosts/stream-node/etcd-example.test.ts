import test from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { StreamClient } from '@baton/client';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import {
  startStreamNodeFromFile,
  streamNodeHostBuilder,
  streamNodeHostConfig,
} from '@baton/host-stream-node/internal/index.js';
import { EtcdConsensus } from '@baton/plugin-etcd/internal/etcd-consensus.js';
import { eventually } from '../eventually.js';
import { examplePath, loadExample } from '../example-config.js';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/server-process.js';

const example = examplePath('stream-node', 'etcd.json');

test('examples/etcd.json validates and composes a node whose consensus is etcd, named by the node id', async (t) => {
  const config = await loadExample(streamNodeHostConfig, 'stream-node', 'etcd.json');
  t.like(config.consensus, { use: 'etcd-consensus' });
  t.false(
    'memberId' in (config.consensus?.options ?? {}),
    'the example relies on the default member id',
  );
  const host = streamNodeHostBuilder(config).build();
  const consensus = host.get(METADATA_CONSENSUS);
  t.true(consensus instanceof EtcdConsensus);
  t.is((consensus as EtcdConsensus<unknown, unknown, unknown>).self, 'n1');
});

test('a memberId given in the config wins over the node id', async (t) => {
  const config = await loadExample(streamNodeHostConfig, 'stream-node', 'etcd.json', {
    BATON__consensus__options__memberId: 'streams-n1',
  });
  const consensus = streamNodeHostBuilder(config).build().get(METADATA_CONSENSUS);
  t.is((consensus as EtcdConsensus<unknown, unknown, unknown>).self, 'streams-n1');
});

test('a node started from examples/etcd.json (addresses overridden) serves a stream through etcd', async (t) => {
  const etcd = await EtcdCluster.start();
  t.teardown(() => etcd.close());
  const dir = await makeTempDir('stream-etcd-example');
  t.teardown(() => dir.remove());
  const port = await freeLoopbackPort();
  // Only where things are changes: the etcd endpoints, the listener, and local stores.
  const { host, node } = await startStreamNodeFromFile({
    file: example,
    env: {
      BATON__consensus__options__endpoints: JSON.stringify(etcd.endpoints),
      BATON__consensus__options__initialVoters: '["n1"]',
      BATON__node__http: JSON.stringify({ port, host: '127.0.0.1' }),
      BATON__node__address: `http://127.0.0.1:${port}`,
      BATON__node__wal: JSON.stringify({ kind: 'file', dir: `${dir.path}/wal` }),
      BATON__dataDir: dir.path,
      BATON__objectStore: JSON.stringify({
        use: 'fs-object-store',
        options: { dir: `${dir.path}/objects` },
      }),
      BATON__log__level: 'silent',
    },
  });
  t.teardown(() => host.stop());
  const client = new StreamClient({
    nodes: [node.url],
    token: 'replace-with-a-secret-admin-token',
  });
  await eventually(
    async () => (await client.nodes()).nodes.length === 1,
    'registration through etcd',
  );
  await client.createStream('s');
  await eventually(() => node.node.session('s')?.writable === true, 'pre-warm');
  t.like(await client.append('s', ['hello']), { first: 0, epoch: 1, node: 'n1' });
  t.deepEqual((await client.read('s')).records, [{ offset: 0, body: 'hello' }]);
});
