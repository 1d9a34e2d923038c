import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { eventually } from '../hosts/eventually.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { placeAuthority } from '../support/cluster-waits.js';
import { call, problemTypeOf } from '../support/https-call.js';
import { peerHeaders } from '../support/peer-auth.js';

const RAFT = '/internal/raft/v1';
const CLUSTER = 'baton';

interface Report {
  role: string;
  leader: string | null;
  term: number;
  appliedIndex: number;
}

const propose = (from: string, command: unknown) => ({ cluster: CLUSTER, from, message: { channel: 'raft-propose', body: { kind: 'command', cluster: CLUSTER, command, timeoutMs: 5_000 } } });
/** The forged commit the issue describes: a planned transfer nobody registered, sealed in olivia's name. */
const forgedCommit = { type: 'commit_planned_transfer', id: 'forged-move', authority: 'proj', source: 'east', target: 'west', actor: 'olivia', reason: 'forged', barrier: 0 };
const forgedMove = { type: 'transfer_authority', id: 'forged-raw', authority: 'proj', source: 'east', target: 'west' };

test.serial('an authority cluster refuses forged commits, moves, voter removals and heartbeats from anyone without a member credential; nothing moves, no audit is sealed', async (t) => {
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const admin = { authorization: `Bearer ${cluster.token}` };
  const [east, west, north] = cluster.nodes;
  await placeAuthority(east.url, cluster.token, 'proj', 'east');
  const reports = async () => Promise.all(cluster.nodes.map(async (n) => (await call(`${n.publicUrl}/availability/v1/cluster/member`, { headers: admin })).body as Report));

  for (const member of cluster.nodes) {
    const base = `${member.publicUrl}${RAFT}`;
    const attempts = [
      await call(`${base}/requests`, { method: 'POST', body: propose('west-1', forgedCommit) }),
      await call(`${base}/requests`, { method: 'POST', body: propose('west-1', forgedMove) }),
      await call(`${base}/requests`, { method: 'POST', body: { cluster: CLUSTER, from: 'west-1', message: { channel: 'raft-propose', body: { kind: 'conf', cluster: CLUSTER, change: 'remove', member: 'north-1', timeoutMs: 5_000 } } } }),
      await call(`${base}/messages`, { method: 'POST', body: { cluster: CLUSTER, from: 'west-1', messages: [{ channel: 'raft', body: { cluster: CLUSTER, message: { type: 'heartbeat', term: 100_001, from: 'west-1', to: member.id, commit: 0 } } }] } }),
      // A guessed secret is no credential, and an admin token is not a peer credential.
      await call(`${base}/requests`, { method: 'POST', body: propose('west-1', forgedCommit), headers: peerHeaders('west-1', 'guessed-guessed-guessed-guessed-guessed') }),
      await call(`${base}/requests`, { method: 'POST', body: propose('west-1', forgedCommit), headers: admin }),
    ];
    for (const attempt of attempts) {
      t.is(attempt.status, 401, `${member.id}: ${JSON.stringify(attempt.body)}`);
      t.is(problemTypeOf(attempt), 'peer-unauthenticated');
    }
    // A real member speaking for another one is refused too.
    const impersonating = await call(`${base}/requests`, {
      method: 'POST',
      body: propose(member.id === 'north-1' ? 'east-1' : 'north-1', forgedCommit),
      headers: peerHeaders(west.id, cluster.record.peerSecrets![west.id]),
    });
    if (member.id !== west.id) {
      t.is(impersonating.status, 403, `${member.id}: ${JSON.stringify(impersonating.body)}`);
      t.is(problemTypeOf(impersonating), 'peer-impersonation');
    }
  }
  // Even a member's own credential cannot commit a transfer nobody registered: the state
  // machine refuses the commit, whoever forwards it.
  const byMember = await call(`${east.publicUrl}${RAFT}/requests`, { method: 'POST', body: propose(west.id, forgedCommit), headers: peerHeaders(west.id, cluster.record.peerSecrets![west.id]) });
  t.true(byMember.status !== 500, JSON.stringify(byMember.body));
  // The envelope of a forwarded proposal may say it was handled (ok); its result must refuse.
  t.not((byMember.body as { body?: { result?: { ok?: boolean } } } | undefined)?.body?.result?.ok, true, JSON.stringify(byMember.body));
  // The planned transfer of the control API needs an admin token: its actor is that token's principal.
  const anonymous = await call(`${east.url}/availability/v1/transfers`, { method: 'POST', headers: { 'idempotency-key': 'anonymous' }, body: { authority: 'proj', source: 'east', target: 'west', reason: 'x' } });
  t.is(anonymous.status, 401);

  // Nothing changed: proj at home in east at epoch 1 on every member, no audit sealed, terms kept, all voters.
  await eventually(async () => {
    const homes = await Promise.all(cluster.nodes.map((n) => call(`${n.url}/availability/v1/authorities/proj`, { headers: admin })));
    const audits = await Promise.all(cluster.nodes.map((n) => call(`${n.url}/availability/v1/authorities/proj/audit`, { headers: admin })));
    return homes.every((h) => h.status === 200) && audits.every((a) => ((a.body as { records?: unknown[] }).records ?? []).length > 0);
  }, 'every member to know proj and store the record of its establish', 30_000);
  for (const member of cluster.nodes) {
    const home = await call(`${member.url}/availability/v1/authorities/proj`, { headers: admin });
    t.deepEqual(home.body, { authority: 'proj', home: 'east', epoch: 1, catch_up: null }, member.id);
    const audit = await call(`${member.url}/availability/v1/authorities/proj/audit`, { headers: admin });
    t.is(audit.status, 200);
    // The establish that gave proj its home is the one record: no attack sealed another.
    t.deepEqual((audit.body as { records: { kind: string }[] }).records.map((r) => r.kind), ['authority_established'], `${member.id} sealed no audit of an attack`);
  }
  for (const r of await reports()) t.true(r.term < 100_001, `term kept (${r.term})`);
  t.true(cluster.nodes.every((n) => cluster.running(n.id)));

  // The cluster still moves proj through the authenticated path, north-1 still a voter, and the
  // sealed record names the principal of the admin token, not an actor a peer claimed.
  const move = (key: string) =>
    call(`${east.url}/availability/v1/transfers`, {
      method: 'POST',
      headers: { ...admin, 'idempotency-key': key },
      body: { authority: 'proj', source: 'east', target: 'west', reason: 'after the attack' },
    });
  const moved = await move('real-move');
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.like(moved.body, { authority: 'proj', source: 'east', target: 'west', actor: 'operator', epoch: 2 });
  await eventually(async () => {
    const audits = await Promise.all(cluster.nodes.map((n) => call(`${n.url}/availability/v1/authorities/proj/audit`, { headers: admin })));
    return audits.every((a) => (a.body as { records?: { actor: string }[] }).records?.length === 2);
  }, "every member (north-1 included) to store the move's record beside the establish's", 30_000);
  for (const member of [east, west, north]) {
    const audit = await call(`${member.url}/availability/v1/authorities/proj/audit`, { headers: admin });
    t.deepEqual(
      (audit.body as { records: { kind: string; actor: string }[] }).records.map((r) => [r.kind, r.actor]),
      [
        ['planned_transfer', 'operator'],
        ['authority_established', 'operator'],
      ],
    );
  }
});
