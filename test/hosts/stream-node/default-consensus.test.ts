import test from 'ava';
import { contractFetch } from '../../support/api-contract.js';
import { existsSync } from 'node:fs';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { StreamClient } from '@baton/client';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { startStreamNode, streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { eventually } from '../eventually.js';

const TOKEN = 'default-admin';

/** A config that names no consensus and no object store: the host's defaults decide. */
function defaultsUnder(dataDir: string | null, walDir?: string) {
  return {
    node: {
      self: 'n1',
      http: { port: 0 },
      wal: walDir ? { kind: 'file', dir: walDir } : { kind: 'memory' },
      tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
    },
    dataDir,
    log: { level: 'silent' },
  };
}

test('the default consensus is a one-voter Raft with its log under the data dir', async (t) => {
  const dir = await makeTempDir('stream-node-default');
  t.teardown(() => dir.remove());
  const { host } = await startStreamNode(defaultsUnder(`${dir.path}/data`));
  t.teardown(() => host.stop());
  t.true(host.get(METADATA_CONSENSUS) instanceof RaftConsensus);
  await eventually(() => host.get(METADATA_CONSENSUS).leadership().isLeader, 'the lone voter to lead');
  t.true(existsSync(`${dir.path}/data/raft`), 'the Raft log is on disk under dataDir/raft');
  // The Raft reports its commit index, so the gauge the contract alone cannot fill is set.
  const committed = /^baton_consensus_commit_index\{node="n1"\} [1-9]\d*$/m;
  const scrape = async () => (await fetch(`${host.get(STREAM_NODE).url}/metrics`)).text();
  await eventually(async () => committed.test(await scrape()), 'a commit index above 0 on /metrics');
  t.regex(await scrape(), committed);
});

test('with the default config, streams, owners and epochs survive a host restart', async (t) => {
  const dir = await makeTempDir('stream-node-default');
  t.teardown(() => dir.remove());
  const config = defaultsUnder(`${dir.path}/data`, `${dir.path}/wal`);
  let { host, node } = await startStreamNode(config);
  let client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration');
  await client.createStream('kept');
  await client.createStream('also-kept');
  await eventually(() => node.node.session('kept')?.writable === true, 'pre-warm of kept');
  t.like(await client.append('kept', ['one', 'two']), { first: 0, epoch: 1 });
  await host.stop();

  ({ host, node } = await startStreamNode(config));
  t.teardown(() => host.stop());
  client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(() => node.node.session('kept')?.writable === true, 'reopen after restart');
  // The node closed its streams at epoch 1 on recovery and reopened them at the next epoch.
  t.like(await client.describe('kept'), { owner: 'n1', epoch: 2, state: 'open', tail: 2 });
  await eventually(async () => (await client.describe('also-kept')).epoch === 2, 'also-kept reopened');
  t.like(await client.describe('also-kept'), { owner: 'n1', state: 'open' });
  t.deepEqual((await client.nodes()).nodes.map((n) => n.id), ['n1']);
  t.like(await client.append('kept', ['three']), { first: 2, epoch: 2 });
  t.deepEqual((await client.read('kept')).records.map((r) => r.body), ['one', 'two', 'three']);
});

test('dataDir null keeps the metadata in memory: a restart forgets every stream', async (t) => {
  const config = defaultsUnder(null);
  let { host, node } = await startStreamNode(config);
  let client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration');
  await client.createStream('forgotten');
  t.like(await client.describe('forgotten'), { owner: 'n1' });
  await host.stop();

  ({ host, node } = await startStreamNode(config));
  t.teardown(() => host.stop());
  client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration after restart');
  await t.throwsAsync(() => client.describe('forgotten'), { message: /not found|unknown|404/i });
});

test('a chosen Raft with other voters gets no default transport: the build names what is missing', (t) => {
  t.throws(
    () =>
      streamNodeHostBuilder({
        ...defaultsUnder(null),
        consensus: { use: 'raft', options: { member: 'n1', voters: ['n1', 'n2'] } },
      }).build(),
    { message: /PeerTransport/ },
  );
});
