import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { eventually } from '../../hosts/eventually.js';
import { startNodeProcesses } from './node-processes.js';

interface Probe {
  status: number;
  contentType: string | null;
  body: Record<string, unknown>;
}

/** A probe as a load balancer sends it: no credential. */
async function probe(base: string, path: '/livez' | '/readyz'): Promise<Probe> {
  const response = await fetch(`${base}${path}`);
  return { status: response.status, contentType: response.headers.get('content-type'), body: (await response.json()) as Record<string, unknown> };
}

test.serial('stream nodes: /livez and /readyz answer without a credential; a node cut off from its quorum is not ready, with the reason', async (t) => {
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const [n1] = cluster.nodes;
  await eventually(
    async () => (await Promise.all(cluster.nodes.map((n) => probe(n.url, '/readyz')))).every((p) => p.status === 200),
    'every node to be ready',
    60_000,
  );
  const ready = await probe(n1.url, '/readyz');
  t.deepEqual(ready.body, { status: 'ready', member: 'n1' });
  t.deepEqual((await probe(n1.url, '/livez')).body, { status: 'live', member: 'n1' });

  await cluster.stop('n2');
  await cluster.stop('n3');
  let cutOff: Probe | undefined;
  await eventually(
    async () => {
      cutOff = await probe(n1.url, '/readyz');
      return cutOff.status === 503;
    },
    'n1 to say it is not ready once it has no quorum',
    30_000,
  );
  t.is(cutOff!.contentType, 'application/problem+json');
  t.is(cutOff!.body.reason, 'no_leader');
  t.is(cutOff!.body.type, 'urn:baton:problem:not-ready');
  t.regex(String(cutOff!.body.detail), /knows no leader/);
  // The process itself is still up and says so.
  const live = await probe(n1.url, '/livez');
  t.is(live.status, 200);
});

test.serial('authority nodes: both listeners of every member answer /readyz; a member alone is not ready', async (t) => {
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const listeners = cluster.nodes.flatMap((n) => [n.url, n.publicUrl]);
  await eventually(
    async () => (await Promise.all(listeners.map((url) => probe(url, '/readyz')))).every((p) => p.status === 200),
    'every listener of every member to be ready',
    60_000,
  );
  const [east, west, north] = cluster.nodes;
  t.deepEqual((await probe(east.publicUrl, '/readyz')).body, { status: 'ready', member: 'east-1' });
  t.deepEqual((await probe(east.url, '/livez')).body, { status: 'live', member: 'east-1' });

  await cluster.kill(west.id);
  await cluster.kill(north.id);
  await eventually(
    async () => {
      const [control, publicServer] = await Promise.all([probe(east.url, '/readyz'), probe(east.publicUrl, '/readyz')]);
      return control.status === 503 && control.body.reason === 'no_leader' && publicServer.status === 503;
    },
    'east-1 to say on both listeners that it is not ready once alone',
    30_000,
  );
  t.is((await probe(east.url, '/livez')).status, 200);
});
