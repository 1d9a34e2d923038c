import test from 'ava';
import { AUDIT_STORE } from '@baton/contracts/internal/audit-store.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import { startAuthorityNode } from '@baton/host-authority-node/internal/host.js';
import { call } from './http-call.js';
import { loopbackMembers, waitForLeader } from './loopback-members.js';
import { ADMIN, WRITER, transfer, waitFor } from './node-harness.js';

test('three nodes on Raft over their public servers: a planned transfer commits and every voter stores its audit', async (t) => {
  const members = await loopbackMembers(['east', 'west', 'north']);
  const roster = members.roster();
  const nodes = [];
  try {
    for (let i = 0; i < 3; i++) {
      nodes.push(
        await startAuthorityNode(members.raftHost(i, roster)),
      );
    }
    const consensus = nodes.map((n) => n.host.get(METADATA_CONSENSUS) as OwnershipConsensus);
    await waitForLeader(consensus);
    const east = nodes[0].node;
    const established = await call(east.controlAddress.url, 'POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    t.is(established.status, 200, JSON.stringify(established.body));
    const write = await call(east.publicAddress.url, 'POST', '/availability/v1/authorities/proj/writes', { token: WRITER, body: { operation: 'op1', epoch: 1 } });
    t.is(write.status, 200, JSON.stringify(write.body));
    const res = await call(east.controlAddress.url, 'POST', '/availability/v1/transfers', { token: ADMIN, body: transfer, key: 'raft-e2e' });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.like(res.body, { id: 'raft-e2e', barrier: 1, epoch: 2 });
    t.true(nodes[1].node.replicas.appliedSerial(east.feed.origin()) >= 1, 'west had applied the barrier');
    await waitFor(() => consensus[0].view().state.pending.size === 0, 'every voter to acknowledge', 15_000);
    for (const n of nodes) t.deepEqual(await n.host.get(AUDIT_STORE).byId('raft-e2e'), res.body);
    t.is(nodes[2].host.get(AUTHORITY_NODE).engine!.registry.size, 0);
    // The Raft reports its commit index, so the gauge the contract alone cannot fill is set.
    const metrics = await (await fetch(`${east.controlAddress.url}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    t.true(gauge('baton_consensus_applied_index') > 0, metrics);
    t.true(gauge('baton_consensus_commit_index') >= gauge('baton_consensus_applied_index'), 'commit index at least the applied index');
    t.regex(metrics, /^baton_event_loop_delay_seconds\{quantile="0\.99"[^}]*\} [\d.e-]+$/m);
  } finally {
    for (const n of nodes.reverse()) await n.host.stop();
  }
});
