import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { NodeProcess } from '@baton/cli/internal/local-cluster/node-process.js';
import { newPeerSecret } from '@baton/cli/internal/local-cluster/peer-credentials.js';
import { peerSecretDigest } from '@baton/http/internal/peer-auth.js';
import { workDir } from './temp-project.js';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { closedPort } from './closed-port.js';
import { exerciseMembership } from './consensus-admin.js';

test.serial('stream cluster: a fourth member process joins as a voter through baton member add, catches up and is removed; leader move; a removal losing the quorum answers 409', async (t) => {
  // The fourth member's credential is known to the three from the start, as an operator would hand it out.
  const secret = newPeerSecret();
  const cluster = await startNodeProcesses(t, streamClusterVariant, {
    configure: (config) => {
      config.peerAuth.peers.n4 = peerSecretDigest(secret);
    },
  });
  const ids = cluster.nodes.map((n) => n.id);
  const urlOf = (id: string) => cluster.nodes.find((n) => n.id === id)!.url;

  // n4 runs with the three as its bootstrap voters: not a voter itself, it waits to be added.
  const [port] = await freeLoopbackPorts(1);
  const url = `http://127.0.0.1:${port}`;
  const dir = await workDir(t);
  const config = JSON.parse(await readFile(cluster.nodes[0].file, 'utf8')) as Record<string, any>;
  config.node.self = 'n4';
  config.node.address = url;
  config.node.http.port = port;
  config.node.wal.dir = join(dir, 'wal');
  config.dataDir = dir;
  config.consensus.options = { member: 'n4', voters: ids, dataDir: join(dir, 'raft') };
  config.peerTransport.options = { member: 'n4', peers: { ...Object.fromEntries(ids.map((id) => [id, urlOf(id)])), n4: url } };
  config.peerAuth = {
    secret,
    peers: Object.fromEntries(ids.map((id) => [id, peerSecretDigest(cluster.record.peerSecrets![id])])),
  };
  const file = join(dir, 'n4.json');
  await writeFile(file, JSON.stringify(config, null, 2), { mode: 0o600 });
  const fourth = new NodeProcess('n4', streamClusterVariant.entryPoint, file, join(dir, 'n4.log'));
  t.teardown(() => fourth.stop().then(() => undefined));

  await exerciseMembership(
    t,
    { prefix: '/v1/admin', ids, urlOf, token: cluster.token, stop: cluster.stop },
    { id: 'n4', address: url, url },
  );
  // It may only have reported listening once it was a voter and had a leader: it did, at some point.
  t.like(await fourth.started, { ok: true });
});

test.serial('authority cluster: baton member add/remove/list and leader move on real processes; a removal losing the quorum answers 409', async (t) => {
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const urlOf = (id: string) => cluster.nodes.find((n) => n.id === id)!.url;
  await exerciseMembership(
    t,
    { prefix: '/availability/v1', ids: cluster.nodes.map((n) => n.id), urlOf, token: cluster.token, stop: cluster.stop },
    { id: 'south-1', address: `http://127.0.0.1:${await closedPort()}` },
  );
});
