import test from 'ava';
import { StreamClient } from '@baton/client';
import { eventually } from '../eventually.js';
import { streamClusterForTest } from '../../nemesis/stream/cluster-for-test.js';

// Placement on real stream node processes as `baton up` runs them (Raft voters, WAL and Raft
// log on files, one fs object store), each node labelled with its zone in its own config.

const DEADLINE_MS = 90_000;
/** n1 and n4 share zone z1, so a drain of n1 has a node of its own zone to give to. */
const ZONE_OF: Record<string, string> = { n1: 'z1', n2: 'z2', n3: 'z3', n4: 'z1' };
const GROUP = 'orders';
const STREAMS = 24;

/** Streams of the group per zone, as the metadata places them (owner, or the target of a pending move). */
async function zoneShares(ops: StreamClient): Promise<Map<string, number>> {
  const shares = new Map<string, number>([['z1', 0], ['z2', 0], ['z3', 0]]);
  for (let i = 0; i < STREAMS; i++) {
    const stream = (await ops.describe(`${GROUP}-${i}`)) as { owner: string; transfer?: { target: string } };
    const zone = ZONE_OF[stream.transfer?.target ?? stream.owner]!;
    shares.set(zone, shares.get(zone)! + 1);
  }
  return shares;
}

test.serial('a drain of a node keeps every zone\'s share of a spread group within one stream, and a pinned stream stays in its zone', async (t) => {
  t.timeout(4 * DEADLINE_MS);
  const c = await streamClusterForTest(t, { name: 'placement', seed: 72_801, members: 4 }, (id) => ({ labels: { zone: ZONE_OF[id]! } }));
  const ops = new StreamClient({ nodes: Object.values(c.urls), token: c.token });
  t.deepEqual(
    Object.fromEntries((await ops.nodes()).nodes.map((n) => [n.id, (n as { labels?: Record<string, string> }).labels])),
    Object.fromEntries(Object.entries(ZONE_OF).map(([id, zone]) => [id, { zone }])),
  );
  for (let i = 0; i < STREAMS; i++) await ops.createStream(`${GROUP}-${i}`, undefined, { spread: { group: GROUP, by: 'zone' } });
  await ops.createStream('pinned', 'n1', { require: { zone: 'z1' } });
  const before = await zoneShares(ops);
  t.deepEqual([...before.values()], [8, 8, 8], 'the group went round the zones at create');

  await ops.drain('n1', 4);
  // Sampled while the drain runs (every sample kept), and at its end.
  const uneven: string[] = [];
  let samples = 0;
  await eventually(
    async () => {
      const shares = await zoneShares(ops);
      samples += 1;
      if (Math.max(...shares.values()) - Math.min(...shares.values()) > 1) uneven.push(JSON.stringify([...shares]));
      return (await ops.node('n1')).drained;
    },
    'the drain of n1 to finish',
    DEADLINE_MS,
  );
  t.deepEqual(uneven, [], `no sample of ${samples} was uneven`);
  const after = await zoneShares(ops);
  t.true(Math.max(...after.values()) - Math.min(...after.values()) <= 1, JSON.stringify([...after]));
  t.is(((await ops.describe('pinned')) as { owner: string }).owner, 'n4', 'the only other node of z1');
  t.is((await ops.transfers()).transfers.length, 0);
});
