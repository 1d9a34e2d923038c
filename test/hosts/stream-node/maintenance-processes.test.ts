import test from 'ava';
import { StreamClient } from '@baton/client';
import { eventually } from '../eventually.js';
import { adminJson, startedEarly } from './admin-json.js';
import { streamClusterForTest } from '../../nemesis/stream/cluster-for-test.js';

// Maintenance windows on real stream node processes as `baton up` runs them (Raft voters, WAL
// and Raft log on files, one fs object store): the budget, the drain at the start, and the
// hand-back at the window's pace after its end, read from the audit trail's times.

const DEADLINE_MS = 90_000;
const STREAMS = 30;
const PACE = 2;

test.serial('a second window past the budget is refused; a window drains its node, ends by itself, and streams return at the set pace', async (t) => {
  t.timeout(4 * DEADLINE_MS);
  const c = await streamClusterForTest(t, { name: 'maintenance', seed: 72_903, members: 3 });
  const url = Object.values(c.urls)[0]!;
  const ops = new StreamClient({ nodes: Object.values(c.urls), token: c.token });
  for (let i = 0; i < STREAMS; i++) await ops.createStream(`m-${i}`);
  const admin = adminJson(url, c.token);
  const owned = async () => Object.fromEntries((await ops.nodes()).nodes.map((n) => [n.id, n.owned]));
  t.deepEqual(await owned(), { n1: 10, n2: 10, n3: 10 });

  const window = await admin('POST', '/v1/admin/nodes/n1/maintenance', { duration: '4s', movesPerSecond: PACE });
  t.is(window.status, 201);
  const second = await admin('POST', '/v1/admin/nodes/n2/maintenance', { duration: '1h' });
  t.is(second.status, 409);
  t.like(second.body, { type: 'urn:baton:problem:maintenance-budget' });

  await eventually(async () => (await ops.node('n1')).owned === 0, 'n1 to give its streams away', DEADLINE_MS);
  t.is((await admin('POST', '/v1/admin/streams', { stream: 'not-here', node: 'n1' })).status, 409, 'no new stream on a node in maintenance');
  await eventually(async () => {
    const node = (await admin('GET', '/v1/admin/nodes/n1')).body as { maintenance: unknown; returning: boolean; owned: number };
    return node.maintenance === null && !node.returning && (await ops.transfers()).transfers.length === 0;
  }, 'the window to end and the hand-back to finish', DEADLINE_MS);
  t.deepEqual(await owned(), { n1: 10, n2: 10, n3: 10 }, 'even again');

  // The hand-back's moves, as the leader proposed them: at most PACE a second, a second's worth at once at most.
  let times: number[] = [];
  await eventually(async () => {
    const page = (await admin('GET', '/v1/admin/audit?kind=transfer_proposed&limit=200')).body as { records: { actor: string; to: string; time?: number }[] };
    const back = page.records.filter((r) => r.actor === 'system:maintenance');
    times = back.map((r) => r.time!).sort((a, b) => a - b);
    return back.length === 10 && back.every((r) => r.to === 'n1' && r.time !== undefined);
  }, "every hand-back move's record in the audit store", DEADLINE_MS);
  const early = startedEarly(times, PACE);
  t.deepEqual(early, [], `hand-back times (ms after the first): ${times.map((at) => at - times[0]!).join(', ')}`);
});
