import test from 'ava';
import { StreamClient } from '@baton/client';
import { eventually } from '../eventually.js';
import { adminJson, startedEarly } from './admin-json.js';
import { streamClusterForTest } from '../../nemesis/stream/cluster-for-test.js';

// A plan run on real stream node processes as `baton up` runs them (Raft voters, WAL and Raft
// log on files, one fs object store): its limits change while it runs, and the transfer list
// shows them obeyed.

const DEADLINE_MS = 90_000;
const STREAMS = 30;

test.serial('a throttle change mid-run is obeyed (moves in flight never above the limit in force, seen from the transfer list), and a paced plan starts its moves at its pace', async (t) => {
  t.timeout(4 * DEADLINE_MS);
  const c = await streamClusterForTest(t, { name: 'plan-throttle', seed: 72_901, members: 3 });
  const url = Object.values(c.urls)[0]!;
  const ops = new StreamClient({ nodes: Object.values(c.urls), token: c.token });
  for (let i = 0; i < STREAMS; i++) await ops.createStream(`p-${i}`, 'n1');
  const admin = adminJson(url, c.token);

  const created = await admin('POST', '/v1/admin/plans', { goal: 'drain', nodes: ['n1'], limits: { maxConcurrent: 4, movesPerSecond: 5 } });
  t.is(created.status, 201);
  t.like(created.body, { status: 'planned', planned: STREAMS, limits: { maxConcurrent: 4, movesPerSecond: 5 } });
  t.is((await ops.transfers()).transfers.length, 0, 'a plan moves nothing');
  const id = created.body.id as string;
  t.is((await admin('POST', `/v1/admin/plans/${id}/execute`)).status, 202);

  // Under the first limits: at most 4 in flight, sampled until a fifth of the moves have started.
  const inFlight = async () => (await ops.transfers()).transfers.length;
  const before: number[] = [];
  await eventually(async () => {
    before.push(await inFlight());
    return (await admin('GET', `/v1/admin/plans/${id}`)).body.progress.started >= STREAMS / 5;
  }, 'a fifth of the moves to start', DEADLINE_MS);
  const lowered = await admin('PATCH', `/v1/admin/plans/${id}`, { maxConcurrent: 1, movesPerSecond: null });
  t.is(lowered.status, 200);
  t.like(lowered.body, { status: 'running', limits: { maxConcurrent: 1, movesPerSecond: null } });
  const startedAtChange = lowered.body.progress.started as number;

  // Moves above the new bound finish; once at most one is in flight, never more again.
  const after: number[] = [];
  await eventually(async () => {
    after.push(await inFlight());
    const plan = (await admin('GET', `/v1/admin/plans/${id}`)).body;
    return plan.status === 'completed';
  }, 'the plan to complete', DEADLINE_MS);
  t.true(before.every((n) => n <= 4), `under maxConcurrent 4: ${before.join(',')}`);
  const settled = after.findIndex((n) => n <= 1);
  t.true(settled >= 0);
  t.deepEqual(after.slice(settled).filter((n) => n > 1), [], `under maxConcurrent 1: ${after.join(',')}`);
  const done = (await admin('GET', `/v1/admin/plans/${id}`)).body;
  t.like(done, { status: 'completed', progress: { started: STREAMS, done: STREAMS, inFlight: 0, waiting: 0, skipped: 0 } });
  t.true(startedAtChange < STREAMS, 'the change came while moves were still waiting');
  t.is((await ops.node('n1')).owned, 0);
  t.like(await ops.node('n1'), { draining: true });
  // Every member shows the same plan.
  for (const member of Object.values(c.urls)) {
    const shown = await fetch(`${member}/v1/admin/plans/${id}`, { headers: { authorization: `Bearer ${c.token}` } });
    t.like(await shown.json(), { id, status: 'completed' });
  }

  // A paced plan: its moves start at most `movesPerSecond` apart, as their audit records stamp
  // them with the leader's time (a second's worth may start at once after a late round).
  t.is((await admin('POST', '/v1/admin/nodes/n1/undrain')).status, 200);
  const PACE = 4;
  const paced = await admin('POST', '/v1/admin/plans', { goal: 'rebalance', limits: { maxConcurrent: 10, movesPerSecond: PACE } });
  t.is(paced.status, 201);
  const moves = paced.body.planned as number;
  t.true(moves >= 8, `a rebalance back onto n1: ${moves} moves`);
  t.is((await admin('POST', `/v1/admin/plans/${paced.body.id}/execute`)).status, 202);
  await eventually(async () => (await admin('GET', `/v1/admin/plans/${paced.body.id}`)).body.status === 'completed', 'the paced plan to complete', DEADLINE_MS);
  const cause = (await admin('GET', `/v1/admin/plans/${paced.body.id}`)).body.cause as string;
  let times: number[] = [];
  await eventually(async () => {
    const page = (await admin('GET', '/v1/admin/audit?kind=transfer_proposed&limit=200')).body as { records: { cause?: string; time?: number; actor: string }[] };
    const ours = page.records.filter((r) => r.cause === cause);
    times = ours.map((r) => r.time!).sort((a, b) => a - b);
    return ours.length === moves && ours.every((r) => r.time !== undefined && r.actor === 'system:rebalance');
  }, "every paced move's record in the audit store", DEADLINE_MS);
  const early = startedEarly(times, PACE);
  t.deepEqual(early, [], `move start times (ms after the first): ${times.map((at) => at - times[0]!).join(', ')}`);
});
