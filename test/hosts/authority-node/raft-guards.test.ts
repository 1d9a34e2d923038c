import test from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import { startAuthorityNode } from '@baton/host-authority-node/internal/host.js';
import { loopbackMembers, waitForLeader } from './loopback-members.js';
import { ADMIN, READER, transfer } from './node-harness.js';

async function control(base: string, method: string, path: string, options: { body?: unknown; key?: string; ifMatch?: string; token?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? ADMIN}` };
  if (options.key) headers['idempotency-key'] = options.key;
  if (options.ifMatch) headers['if-match'] = options.ifMatch;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

test('three authority nodes on Raft: a guarded planned transfer retried at other members replays its record, a stale guard anywhere is 412, another move under the key 422', async (t) => {
  const members = await loopbackMembers(['east', 'west', 'north']);
  const roster = members.roster();
  const nodes: Awaited<ReturnType<typeof startAuthorityNode>>[] = [];
  t.teardown(async () => {
    for (const n of nodes.reverse()) await n.host.stop();
  });
  for (let i = 0; i < 3; i++) {
    nodes.push(
      await startAuthorityNode(members.raftHost(i, roster)),
    );
  }
  await waitForLeader(nodes.map((n) => n.host.get(METADATA_CONSENSUS) as OwnershipConsensus));
  const [east, west, north] = nodes.map((n) => n.node.controlAddress.url);
  t.is((await control(east, 'POST', '/availability/v1/commands', { body: { type: 'transfer_authority', authority: 'proj', target: 'east' } })).status, 200);
  const tag = (await control(north, 'GET', '/availability/v1/authorities/proj', { token: READER })).headers.get('etag');
  t.is(tag, '"1"');

  const stale = await control(west, 'POST', '/availability/v1/transfers', { body: transfer, key: 'stale-guard', ifMatch: '"4"' });
  t.is(stale.status, 412, JSON.stringify(stale.body));
  t.like(stale.body, { owner: 'east', epoch: 1 });

  const first = await control(east, 'POST', '/availability/v1/transfers', { body: transfer, key: 'guarded-raft', ifMatch: tag! });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.like(first.body, { id: 'guarded-raft', source: 'east', target: 'west', epoch: 2 });
  for (const [name, base] of [['west', west], ['north', north]] as const) {
    const retried = await control(base, 'POST', '/availability/v1/transfers', { body: transfer, key: 'guarded-raft', ifMatch: tag! });
    t.is(retried.status, 200, `${name}: ${JSON.stringify(retried.body)}`);
    t.deepEqual(retried.body, first.body, name);
  }
  t.is((await control(north, 'POST', '/availability/v1/transfers', { body: { ...transfer, reason: 'another move' }, key: 'guarded-raft' })).status, 422);
  const late = await control(north, 'POST', '/availability/v1/transfers', { body: { ...transfer, source: 'west', target: 'north' }, ifMatch: tag! });
  t.is(late.status, 412, JSON.stringify(late.body));
  t.like(late.body, { owner: 'west', epoch: 2 });
});
