import test from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import {
  authorityNodeHostBuilder,
  authorityNodeHostConfig,
  startAuthorityNodeFromFile,
} from '@baton/host-authority-node/internal/index.js';
import { EtcdConsensus } from '@baton/plugin-etcd/internal/etcd-consensus.js';
import { eventually } from '../eventually.js';
import { examplePath, loadExample } from '../example-config.js';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/server-process.js';
import { call } from './http-call.js';

const example = examplePath('authority-node', 'etcd.json');
const ADMIN = 'replace-with-a-secret-admin-token';

test('examples/etcd.json validates and composes an HA node whose consensus is etcd, named by the node id', async (t) => {
  const config = await loadExample(authorityNodeHostConfig, 'authority-node', 'etcd.json');
  t.like(config.consensus, { use: 'etcd-consensus' });
  t.false(
    'memberId' in (config.consensus?.options ?? {}),
    'the example relies on the default member id',
  );
  const host = authorityNodeHostBuilder(config).build();
  const consensus = host.get(METADATA_CONSENSUS);
  t.true(consensus instanceof EtcdConsensus);
  t.is((consensus as EtcdConsensus<unknown, unknown, unknown>).self, 'east-1');
});

test('a node started from examples/etcd.json (addresses overridden) commits an ownership command through etcd', async (t) => {
  const etcd = await EtcdCluster.start();
  t.teardown(() => etcd.close());
  const port = await freeLoopbackPort();
  // Only where things are changes: the etcd endpoints, the listeners and an in-memory store.
  const { host, node } = await startAuthorityNodeFromFile({
    file: example,
    env: {
      BATON__consensus__options__endpoints: JSON.stringify(etcd.endpoints),
      BATON__node__roster: JSON.stringify({
        east: { members: { 'east-1': { public: `http://127.0.0.1:${port}` } } },
      }),
      BATON__node__public: JSON.stringify({ port, host: '127.0.0.1' }),
      BATON__node__control: JSON.stringify({ port: 0, host: '127.0.0.1' }),
      BATON__dataDir: 'null',
      BATON__log__level: 'silent',
    },
  });
  t.teardown(() => host.stop());
  const consensus = host.get(METADATA_CONSENSUS);
  await eventually(() => consensus.leadership().isLeader, 'east-1 to lead its etcd election');
  const res = await call(node.controlAddress.url, 'POST', '/availability/v1/commands', {
    token: ADMIN,
    key: 'est-proj',
    body: { type: 'transfer_authority', authority: 'proj', target: 'east' },
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { home: 'east', epoch: 1, replayed: false });
  t.true((res.body.commit_index as number) > 0, 'positioned at an etcd revision');
});
