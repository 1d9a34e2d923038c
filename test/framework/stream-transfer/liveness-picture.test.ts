import test from 'ava';
import { fetchClusterPicture, stateOf } from '@baton/cli/internal/status/cluster-picture.js';
import { BatonMetrics } from '@baton/http/internal/metrics.js';
import { LivenessMetrics } from '@baton/stream-transfer/internal/liveness-metrics.js';
import { ADMIN_TOKEN, ApiCluster } from './api-fixture.js';

// One cluster model: the liveness the metadata leader published is what `baton status` (and the
// dashboard, which draws the same picture) and /metrics show for every node.
test('baton status, the cluster picture and /metrics show the same published Alive / Suspect / Dead per node', async (t) => {
  const api = new ApiCluster();
  t.teardown(() => api.stop());
  for (const id of ['a', 'b', 'c']) await api.addNode(id);
  await api.cluster.must({ type: 'node-liveness', node: 'b', liveness: 'Suspect' });
  await api.cluster.must({ type: 'node-liveness', node: 'c', liveness: 'Dead' });
  const expected: Record<string, string> = { a: 'Alive', b: 'Suspect', c: 'Dead' };

  const picture = await fetchClusterPicture([api.url('a')], ADMIN_TOKEN, 5_000);
  const shown = Object.fromEntries(picture.members.map((m) => [m.id, m.liveness]));
  // The fake log's own voter ("local") registered no stream node: no verdict, rather than a guess.
  t.deepEqual(shown, { ...expected, local: null }, 'the picture baton status and the dashboard draw');
  t.is(stateOf(picture.members.find((m) => m.id === 'c')!), 'up (Dead)', 'a node published Dead while it still answers');

  const metrics = new BatonMetrics({ defaultMetrics: false, eventLoopDelay: false });
  new LivenessMetrics(metrics, api.cluster.node('a').consensus);
  const text = await metrics.registry.metrics();
  for (const [node, liveness] of Object.entries(expected)) {
    t.regex(text, new RegExp(`^baton_stream_node_liveness\\{stream_node="${node}",liveness="${liveness}"\\} 1$`, 'm'), `${node} is ${liveness} on /metrics`);
    for (const other of ['Alive', 'Suspect', 'Dead'].filter((l) => l !== liveness)) {
      t.regex(text, new RegExp(`^baton_stream_node_liveness\\{stream_node="${node}",liveness="${other}"\\} 0$`, 'm'));
    }
  }

  // Back: the next publication changes every view alike.
  await api.cluster.must({ type: 'node-liveness', node: 'c', liveness: 'Alive' });
  const again = await fetchClusterPicture([api.url('b')], ADMIN_TOKEN, 5_000);
  t.is(again.members.find((m) => m.id === 'c')!.liveness, 'Alive');
  t.regex(await metrics.registry.metrics(), /^baton_stream_node_liveness\{stream_node="c",liveness="Alive"\} 1$/m);
});
