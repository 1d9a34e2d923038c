import test from 'ava';
import { CLOCK, type Clock } from '@baton/contracts';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import type { AuthorityNode } from '@baton/authority-transfer/internal/authority-node.js';
import type { Host } from '@baton/kernel/internal/host.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { authorityNodeHostBuilder, startAuthorityNode } from '@baton/host-authority-node/internal/host.js';
import { call } from './http-call.js';
import { loopbackMembers, waitForLeader } from './loopback-members.js';
import { ADMIN, transfer, waitFor } from './node-harness.js';

/** The system clock, read `offsetMs` ahead (what a member whose NTP drifted reads). */
class OffsetClock extends SystemClock implements Clock {
  offsetMs = 0;
  override now(): number {
    return super.now() + this.offsetMs;
  }
}

test('a member that reads a peer clock past transfers.maxClockSkewMs drives no new transfer (503 clock-skew, nothing registered) until the clocks agree again', async (t) => {
  const members = await loopbackMembers(['east', 'west', 'north']);
  const roster = members.roster();
  const north = new OffsetClock();
  north.offsetMs = 30_000;
  const nodes: { host: Host; node: AuthorityNode }[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const builder = authorityNodeHostBuilder({
        ...members.raftHost(i, roster),
        node: { ...members.node(i, roster), transfers: { expiryGraceMs: 10_000, maxClockSkewMs: 2_000 } },
      });
      if (i === 2) builder.value(CLOCK, north);
      const host = builder.build();
      await host.start();
      nodes.push({ host, node: host.get(AUTHORITY_NODE) });
    }
    const consensus = nodes.map((n) => n.host.get(METADATA_CONSENSUS) as OwnershipConsensus);
    await waitForLeader(consensus);
    const east = nodes[0].node;
    t.is((await call(east.controlAddress.url, 'POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } })).status, 200);
    await waitFor(() => east.clocks.exceeded()?.peer === 'north-1', "east to read north's clock past the bound", 10_000);

    const refused = await call(east.controlAddress.url, 'POST', '/availability/v1/transfers', { token: ADMIN, body: transfer, key: 'skewed' });
    t.is(refused.status, 503, JSON.stringify(refused.body));
    t.like(refused.body, { type: 'urn:baton:problem:clock-skew' });
    t.regex(String((refused.body as { detail?: string }).detail), /clock of north-1 is \d+ ms ahead of this member's, past transfers\.maxClockSkewMs \(2000 ms\)/);
    t.false(consensus[0].view().state.transfers.has('proj'), 'nothing was registered');
    const metrics = await (await fetch(`${east.controlAddress.url}/metrics`)).text();
    const offset = Number(/^baton_peer_clock_offset_seconds\{[^}]*peer="north-1"[^}]*\} ([\d.e+-]+)$/m.exec(metrics)?.[1]);
    t.true(offset > 25 && offset < 35, `north's offset as east reads it: ${offset} s`);

    north.offsetMs = 0;
    await waitFor(() => east.clocks.exceeded() === undefined, "east to read north's clock back within the bound", 10_000);
    const committed = await call(east.controlAddress.url, 'POST', '/availability/v1/transfers', { token: ADMIN, body: transfer, key: 'skewed' });
    t.is(committed.status, 200, JSON.stringify(committed.body));
    t.like(committed.body, { id: 'skewed', target: 'west', epoch: 2 });
  } finally {
    for (const n of nodes.reverse()) await n.host.stop();
  }
});

test('a skew bound at or above the expiry grace is refused at start, saying why', async (t) => {
  const members = await loopbackMembers(['east']);
  const error = await t.throwsAsync(
    startAuthorityNode({ node: { ...members.node(0, members.roster()), mode: 'dc', transfers: { expiryGraceMs: 5_000, maxClockSkewMs: 5_000 } }, dataDir: null, log: { level: 'silent' } }),
  );
  t.regex(error!.message, /maxClockSkewMs must be below expiryGraceMs/);
});
