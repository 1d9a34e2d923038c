import test from 'ava';
import { authorityClusterVariant } from '../../cli/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '../../cli/local-cluster/local-stream-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { closedPort } from './closed-port.js';
import { exerciseMembership } from './consensus-admin.js';

test.serial('stream cluster: baton member add/remove/list and leader move on real processes; a removal losing the quorum answers 409', async (t) => {
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const urlOf = (id: string) => cluster.nodes.find((n) => n.id === id)!.url;
  await exerciseMembership(
    t,
    { prefix: '/v1/admin', ids: cluster.nodes.map((n) => n.id), urlOf, token: cluster.token, stop: cluster.stop },
    { id: 'n4', address: `http://127.0.0.1:${await closedPort()}` },
  );
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
