import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { leaderEveryMemberFollows, placeAuthority } from '../support/cluster-waits.js';
import { call } from '../support/https-call.js';
import { openFlood } from './connection-flood.js';

interface Report {
  id: string;
  role: string;
  leader: string | null;
  term: number;
}

// The authority variant's listeners admit connections as the stream node's do: a flood of
// connections that never finish a request, on the Raft leader's public server (where the peer
// traffic runs) and its control listener, leaves it leading and every member Alive.
test.serial("22,000 idle, slow-header and slow-body connections on an authority leader's public and control listeners change no term and no member's liveness; a planned transfer still commits through them", async (t) => {
  t.timeout(300_000);
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const admin = { authorization: `Bearer ${cluster.token}` };
  const [east] = cluster.nodes;
  await placeAuthority(east.url, cluster.token, 'proj', 'east');
  const reports = async () =>
    Promise.all(cluster.nodes.map(async (n) => (await call(`${n.publicUrl}/availability/v1/cluster/member`, { headers: admin })).body as Report));
  const reportOf = async (id: string) => (await call(`${cluster.nodes.find((n) => n.id === id)!.publicUrl}/availability/v1/cluster/member`, { headers: admin })).body as Report;
  const leader = await leaderEveryMemberFollows(
    cluster.nodes.map((n) => n.id),
    reportOf,
  );
  const termsBefore = (await reports()).map((r) => r.term);
  const target = cluster.nodes.find((n) => n.id === leader)!;

  const floods = [await openFlood(`${target.publicUrl}/availability/v1/feed`, 11_000), await openFlood(`${target.url}/availability/v1/transfers`, 11_000)];
  t.teardown(() => floods.forEach((f) => f.end()));
  t.log(floods.map((f) => `${f.open.size} open, ${f.closedByListener()} closed by the member`).join('; '));

  // With the floods open: the control listener answers, a planned transfer commits, every member is Alive.
  const moved = await call(`${target.url}/availability/v1/transfers`, {
    method: 'POST',
    headers: { ...admin, 'idempotency-key': 'during-the-flood' },
    body: { authority: 'proj', source: 'east', target: 'west', reason: 'during the flood' },
  });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  const picture = (await call(`${target.url}/availability/v1/cluster`, { headers: admin })).body as { members: { id: string; liveness: string | null }[] };
  t.deepEqual(
    picture.members.map((m) => m.liveness),
    picture.members.map(() => 'Alive'),
    JSON.stringify(picture.members),
  );
  t.deepEqual((await reports()).map((r) => r.term), termsBefore, 'no election');
  for (const member of cluster.nodes) t.true(cluster.running(member.id), `${member.id} still runs`);
});
