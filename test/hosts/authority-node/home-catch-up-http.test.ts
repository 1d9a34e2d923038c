import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import type { FeedOrigin } from '@baton/authority-transfer/internal/change-feed.js';
import { FRONTIER_PROBE, type FrontierProbe } from '@baton/authority-transfer/internal/frontier-probe.js';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import type { Host } from '@baton/kernel/internal/host.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import type { AuthorityNode } from '@baton/authority-transfer/internal/authority-node.js';
import { authorityNodeHostBuilder } from '@baton/host-authority-node/internal/host.js';
import { testPeerAuth } from '../../support/peer-auth.js';
import type { ClusterStatus } from '@baton/cluster/internal/schemas.js';
import { eventually } from '../eventually.js';
import { call } from './http-call.js';
import { loopbackMembers, waitForLeader } from './loopback-members.js';
import { ADMIN, WRITER, transfer, waitFor } from './node-harness.js';

// Three members on Raft over HTTP, each with its own data dir. east drives east -> west; its probe
// reads west's replica in this process, and the reading that readies the commit (frozen, every
// final in) is taken just before west goes down and loses its replica of east's feed. The move
// commits on east and north. With east away, west comes back as the new home without the writes:
// it must answer writes 503 home-catching-up (problem+json, Retry-After) and count them, and
// accept them once it pulled east's feed through the final again.

test('a new home that lost its replica of the source feed refuses writes with 503 and Retry-After until it pulled the final serials again', async (t) => {
  const dirs = await Promise.all([0, 1, 2].map((i) => makeTempDir(`home-catch-up-${i}`)));
  t.teardown(() => Promise.all(dirs.map((d) => d.remove())).then(() => undefined));
  const members = await loopbackMembers(['east', 'west', 'north']);
  const { ids, peers } = members;
  const roster = members.roster();
  const nodes: { host: Host; node: AuthorityNode }[] = [];
  const running = new Set<{ host: Host }>();
  let wiped = false;
  // East's probe: west's replica as it is, in this process. The reading that readies the commit
  // is the last one before west loses its replica.
  const probe: FrontierProbe = {
    async probe(_target: string, origin: FeedOrigin) {
      const position = nodes[1].node.replicas.applied(origin.member);
      const reading = { serial: position.incarnation === origin.incarnation ? position.serial : 0, replica: `west-1=${position.storage ?? 'none'}` };
      const intent = (nodes[0].host.get(METADATA_CONSENSUS) as OwnershipConsensus).view().state.transfers.get('proj');
      const finals = intent?.frozen ? intent.sources.map((s) => s.final) : [];
      if (!wiped && finals.length > 0 && finals.every((f) => f !== undefined && reading.serial >= f)) {
        wiped = true;
        await nodes[1].host.stop();
        running.delete(nodes[1]);
        await rm(join(dirs[1].path, 'feed', 'replicas'), { recursive: true, force: true });
      }
      return reading;
    },
  };
  const start = async (i: number) => {
    const builder = authorityNodeHostBuilder({
      node: members.node(i, roster),
      consensus: { use: 'raft', options: { member: ids[i], voters: ids } },
      peerTransport: { use: 'raft-http-transport', options: { member: ids[i], peers } },
      peerAuth: testPeerAuth(ids[i], ids),
      auditStore: { use: 'memory-audit-store' },
      dataDir: dirs[i].path,
      log: { level: 'silent' },
    });
    if (i === 0) builder.value(FRONTIER_PROBE, probe);
    const host = builder.build();
    await host.start();
    nodes[i] = { host, node: host.get(AUTHORITY_NODE) };
    running.add(nodes[i]);
  };
  for (let i = 0; i < 3; i++) await start(i);
  try {
    const consensus = () => nodes.map((n) => n.host.get(METADATA_CONSENSUS) as OwnershipConsensus);
    await waitForLeader(consensus());
    const east = nodes[0].node;
    await call(east.controlAddress.url, 'POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    for (let i = 0; i < 3; i++) {
      const write = await call(east.publicAddress.url, 'POST', '/availability/v1/authorities/proj/writes', { token: WRITER, body: { operation: `op${i}`, epoch: 1 } });
      t.is(write.status, 200, JSON.stringify(write.body));
    }
    const moved = await call(east.controlAddress.url, 'POST', '/availability/v1/transfers', { token: ADMIN, body: transfer, key: 'lost-replica' });
    t.is(moved.status, 200, JSON.stringify(moved.body));
    t.like(moved.body, { barrier: 3, epoch: 2, target: 'west' });
    t.true(wiped, 'west lost its replica after the reading that readied the commit');
    const origin = east.feed.origin();

    // East goes away; west comes back without its replica of east's feed.
    await nodes[0].host.stop();
    running.delete(nodes[0]);
    await start(1);
    const restarted = nodes[1].node;
    t.is(restarted.replicas.appliedSerial(origin), 0, 'the new home holds none of east writes');
    await waitForLeader([nodes[1], nodes[2]].map((n) => n.host.get(METADATA_CONSENSUS) as OwnershipConsensus), 'west and north to elect a leader', 30_000);

    const writeAtWest = () =>
      fetch(`${restarted.publicAddress.url}/availability/v1/authorities/proj/writes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${WRITER}`, 'content-type': 'application/json' },
        body: JSON.stringify({ operation: 'at the new home', epoch: 2 }),
      });
    await waitFor(() => restarted.fence !== undefined && (nodes[1].host.get(METADATA_CONSENSUS) as OwnershipConsensus).view().state.authorities.get('proj')?.home === 'west', 'west to apply the move again', 30_000);
    // Right after the election a linearizable read can still fail (503 ownership unavailable):
    // ask again until the answer is the fence's own, within a deadline.
    let refused = await writeAtWest();
    await eventually(async () => {
      if (refused.status !== 503 || ((await refused.clone().json()) as { code?: string }).code === 'home_catching_up') return true;
      refused = await writeAtWest();
      return false;
    }, "the fence's own answer rather than a 503 from the election", 15_000).catch(() => undefined);
    t.is(refused.status, 503);
    t.regex(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
    t.truthy(refused.headers.get('retry-after'), 'the refusal says when to retry');
    t.like(await refused.json(), { code: 'home_catching_up', authority: 'proj', barrier: 3, frontier: 0 });
    const metrics = await (await fetch(`${restarted.controlAddress.url}/metrics`)).text();
    t.regex(metrics, /^baton_home_catch_up_refusals_total\{[^}]*\} [1-9]\d*$/m, 'the refusals are counted');
    t.regex(metrics, /^baton_homes_catching_up\{[^}]*\} 1$/m);
    t.is(restarted.feed.serial(), 0, 'the refused write got no serial');
    // The operator's views say the same: which member, the final and what it holds.
    const answer = await call(restarted.controlAddress.url, 'GET', '/availability/v1/authorities/proj', { token: ADMIN });
    t.deepEqual(answer.body, {
      authority: 'proj',
      home: 'west',
      epoch: 2,
      catch_up: { waiting_on: ['west-1'], settled: [], finals: [{ source: 'east-1', incarnation: origin.incarnation, final: 3, held: 0 }], held_at: 'west-1' },
    });
    const listing = await call(restarted.controlAddress.url, 'GET', '/availability/v1/authorities', { token: ADMIN });
    t.like((listing.body as { authorities: unknown[] }).authorities[0], { authority: 'proj', catch_up: { waiting_on: ['west-1'] } });
    const picture = await call(restarted.controlAddress.url, 'GET', '/availability/v1/cluster', { token: ADMIN });
    const westReport = (picture.body as ClusterStatus).members.find((m) => m.id === 'west-1')!.report!;
    t.deepEqual(westReport.homesCatchingUp, { count: 1, shown: [{ authority: 'proj', epoch: 2, source: 'east-1', incarnation: origin.incarnation, final: 3, held: 0 }] });

    // East is back: west pulls its feed through the final serial and then accepts the write.
    await start(0);
    await waitFor(() => restarted.replicas.appliedSerial(origin) >= 3, 'west to pull east feed again', 30_000);
    const accepted = await writeAtWest();
    t.is(accepted.status, 200, await accepted.clone().text());
    t.like(await accepted.json(), { epoch: 2 });
    // Settled, west-1 (the home's only member) is no longer catching up: the answer says so.
    await eventually(async () => (await call(restarted.controlAddress.url, 'GET', '/availability/v1/authorities/proj', { token: ADMIN })).body.catch_up === null, 'the answer to show the home caught up', 15_000);
  } finally {
    for (const n of [...running].reverse()) await n.host.stop();
  }
});
