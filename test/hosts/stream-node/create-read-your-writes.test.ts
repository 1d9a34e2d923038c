import test from 'ava';
import { contractFetch } from '../../support/api-contract.js';
import { StreamClient } from '@baton/client';
import { S3Server } from '@baton/testing/internal/s3-server.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { eventually } from '../eventually.js';
import { ADMIN_TOKEN, startS3StreamCluster } from './s3-stream-cluster.js';

test('once the admin API answered 201, every node of the Raft serves or describes the stream: none answers 404', async (t) => {
  const server = await S3Server.start();
  t.teardown(() => server.close());
  const dir = await makeTempDir('stream-create-ryw');
  t.teardown(() => dir.remove());
  const cluster = await startS3StreamCluster(server, dir.path, ['n1', 'n2', 'n3']);
  t.teardown(() => cluster.stop());
  const client = new StreamClient({ nodes: cluster.urls, token: ADMIN_TOKEN, fetch: contractFetch() });
  const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
  await eventually(async () => (await client.nodes()).nodes.length === 3, 'all three nodes registered');
  for (let i = 0; i < 30; i += 1) {
    const stream = `ryw-${i}`;
    const owner = cluster.ids[i % 3];
    // Created through one node, read at once from every node (followers may not have applied it yet).
    const created = await fetch(`${cluster.urls[(i + 1) % 3]}/v1/admin/streams`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ stream, node: owner }),
    });
    t.is(created.status, 201);
    const answers = await Promise.all(cluster.urls.map((url) => fetch(`${url}/v1/streams/${stream}`, auth)));
    t.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200],
      `${stream}: every node knows the stream right after the 201`,
    );
    const read = await fetch(`${cluster.urls[(i + 2) % 3]}/v1/streams/${stream}/records`, auth);
    t.is(read.status, 200);
  }
  const missing = await fetch(`${cluster.urls[0]}/v1/streams/never-created`, auth);
  t.is(missing.status, 404, 'a stream that does not exist is still a 404, after the catch-up');
});
