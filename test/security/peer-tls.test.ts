import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { eventually } from '../hosts/eventually.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { call } from '../support/https-call.js';
import { peerHeaders } from '../support/peer-auth.js';

interface Report {
  id: string;
  role: string;
  leader: string | null;
  commitIndex: number | null;
  appliedIndex: number;
}

test.serial('a stream cluster whose members serve TLS runs Raft over HTTPS: a leader, writes applied everywhere; TLS does not replace peer credentials', async (t) => {
  const cluster = await startNodeProcesses(t, streamClusterVariant, { tls: true });
  const caFile = cluster.nodes[0].caFile!;
  t.truthy(caFile);
  const admin = { authorization: `Bearer ${cluster.token}` };
  for (const node of cluster.nodes) t.regex(node.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const report = async (url: string) => (await call(`${url}/v1/admin/cluster/member`, { headers: admin, caFile })).body as Report;
  let leader: Report | undefined;
  await eventually(async () => {
    const reports = await Promise.all(cluster.nodes.map((n) => report(n.url).catch(() => undefined)));
    leader = reports.find((r) => r?.role === 'leader');
    return leader !== undefined && reports.every((r) => r?.leader === leader!.id);
  }, 'a leader that every member follows, elected over HTTPS', 90_000);
  const leaderUrl = cluster.nodes.find((n) => n.id === leader!.id)!.url;
  const created = await call(`${leaderUrl}/v1/admin/streams`, { method: 'POST', headers: admin, body: { stream: 'over-tls' }, caFile });
  t.is(created.status, 201);
  const target = (await report(leaderUrl)).commitIndex ?? 0;
  await eventually(async () => (await Promise.all(cluster.nodes.map((n) => report(n.url)))).every((r) => r.appliedIndex >= target), 'every member to apply the create', 30_000);

  // A peer route over TLS still wants the member's own credential.
  const raft = `${leaderUrl}/internal/raft/v1/requests`;
  const forged = { cluster: 'baton', from: 'n2', message: { channel: 'raft-propose', body: { kind: 'command', cluster: 'baton', command: { type: 'create-stream', stream: 'forged' }, timeoutMs: 5_000 } } };
  const anonymous = await call(raft, { method: 'POST', body: forged, caFile });
  t.is(anonymous.status, 401);
  t.is(anonymous.type, 'application/problem+json');
  const wrongSecret = await call(raft, { method: 'POST', body: forged, headers: peerHeaders('n2', 'not-the-secret-of-n2-not-the-secret-of-n2'), caFile });
  t.is(wrongSecret.status, 401);
  // Plain HTTP to the TLS port gets no answer.
  await t.throwsAsync(call(leaderUrl.replace('https:', 'http:') + '/livez'));
  t.true(cluster.nodes.every((n) => cluster.running(n.id)));
});

test.serial('an authority cluster whose members serve TLS places an authority and moves it by a planned transfer: Raft, feeds and probes over HTTPS', async (t) => {
  const cluster = await startNodeProcesses(t, authorityClusterVariant, { tls: true });
  const caFile = cluster.nodes[0].caFile!;
  const admin = { authorization: `Bearer ${cluster.token}` };
  const [east] = cluster.nodes;
  t.regex(east.url, /^https:/);
  t.regex(east.publicUrl, /^https:/);
  await eventually(async () => {
    const placed = await call(`${east.url}/availability/v1/commands`, {
      method: 'POST',
      headers: { ...admin, 'idempotency-key': 'place-proj-over-tls' },
      body: { type: 'transfer_authority', authority: 'proj', target: 'east' },
      caFile,
    }).catch((error: Error) => ({ status: 0, body: error.message }));
    return placed.status === 200;
  }, 'the authority placed once the Raft has a leader', 90_000);
  await eventually(async () => {
    const homes = await Promise.all(cluster.nodes.map((n) => call(`${n.url}/availability/v1/authorities/proj`, { headers: admin, caFile })));
    return homes.every((h) => h.status === 200 && (h.body as { home: string }).home === 'east');
  }, 'every member to apply the placement', 30_000);
  const write = await call(`${east.publicUrl}/availability/v1/authorities/proj/writes`, { method: 'POST', headers: admin, body: { epoch: 1, operation: 'op-1' }, caFile });
  t.is(write.status, 200, JSON.stringify(write.body));
  // The target must catch up with the source's feed (pulled over HTTPS) before the move commits.
  const moved = await call(`${east.url}/availability/v1/transfers`, {
    method: 'POST',
    headers: { ...admin, 'idempotency-key': 'move-proj-over-tls' },
    body: { authority: 'proj', source: 'east', target: 'west', reason: 'tls test' },
    caFile,
  });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.like(moved.body, { authority: 'proj', source: 'east', target: 'west' });
  await eventually(async () => {
    const homes = await Promise.all(cluster.nodes.map((n) => call(`${n.url}/availability/v1/authorities/proj`, { headers: admin, caFile })));
    return homes.every((h) => (h.body as { home?: string }).home === 'west');
  }, 'every member to apply the move', 30_000);
  t.true(cluster.nodes.every((n) => cluster.running(n.id)));
});
