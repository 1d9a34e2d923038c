import test from 'ava';
import { eventually } from '../eventually.js';
import { startProcessCluster, type ProcessCluster } from './process-cluster.js';

// A member cut off from the majority (the two other voters SIGSTOPped) still answers planned
// transfer requests with the seed's answers: a run called off by a cancel answers 409 (it never
// proposes its commit, so it cannot have committed), and a POST it cannot decide answers 503
// once its linearizable read gives up, rather than holding the operator.

const BODY = { authority: 'proj', source: 'east', target: 'north', reason: 'drain east' };

/** The leader now, and a target and a taker that are neither the leader nor east (the source). */
async function roles(cluster: ProcessCluster) {
  const { leader } = (await cluster.control('east-1', 'GET', '/cluster', { timeoutMs: 10_000 })).body as { leader?: string };
  // The paused target is never the leader, so pausing it leaves a leader for the registration.
  const target = leader === 'north-1' ? 'west' : 'north';
  const taker = target === 'north' ? 'west-1' : 'north-1';
  return { target, taker };
}

/** The plans a member holds (`baton_transfers_in_flight` on its control listener). */
async function plansInFlight(cluster: ProcessCluster, id: string): Promise<number> {
  const text = await (await fetch(`${cluster.byId(id).control}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const line = text.split('\n').find((l) => l.startsWith('baton_transfers_in_flight'));
  return line === undefined ? Number.NaN : Number(line.split(' ').at(-1));
}

async function expectNoTransferAnywhere(cluster: ProcessCluster, what: string): Promise<void> {
  for (const m of cluster.members) {
    await eventually(async () => (await cluster.control(m.id, 'GET', '/transfers/proj', { timeoutMs: 5_000 })).status === 404, `${m.id} to hold no transfer of proj (${what})`, 60_000);
  }
}

test('cut off from the majority, a reissued key cancelled while its registration is in flight answers 409 transfer_cancelled (not 503), and the registration is released', async (t) => {
  t.timeout(300_000);
  const cluster = await startProcessCluster(t);
  await cluster.establish('east');
  const { target, taker } = await roles(cluster);
  const body = { ...BODY, target };
  const paused = cluster.byId(`${target}-1`).member.process;
  const east = cluster.byId('east-1').member.process;
  paused.pause();
  try {
    // A registration this member made and no longer drives: it stopped while the transfer waited.
    const first = cluster.control(taker, 'POST', '/transfers', { body, key: 'reissued', timeoutMs: 240_000 }).catch((error: Error) => error);
    await eventually(async () => (await cluster.control('east-1', 'GET', '/transfers/proj')).body?.id === 'reissued', 'east-1 to see the registered transfer');
    const restarted = cluster.byId(taker).member.process;
    await restarted.stop();
    await first;
    restarted.start();
    await eventually(async () => (await cluster.control(taker, 'GET', '/transfers/proj', { timeoutMs: 5_000 })).body?.id === 'reissued', `${taker} to show the registration after its restart`, 90_000);

    // Now the taker alone: its reissue of the key proposes a join the cluster cannot decide.
    east.pause();
    const reissue = cluster.control(taker, 'POST', '/transfers', { body, key: 'reissued', timeoutMs: 120_000 });
    // The reissue holds a plan at the taker (a restarted member holds none of its own): read from
    // its metrics, which need no consensus (its transfer routes read through the leader first).
    await eventually(async () => (await plansInFlight(cluster, taker)) === 1, 'the reissue to hold a plan at the taker');
    const cancel = await cluster.control(taker, 'DELETE', '/transfers/proj', { timeoutMs: 30_000 });
    t.is(cancel.status, 204, JSON.stringify(cancel.body));
    const answered = await reissue;
    t.is(answered.status, 409, `a run called off answers the seed's 409, not ${answered.status}: ${JSON.stringify(answered.body)}`);
    t.like(answered.body, { code: 'transfer_cancelled', transfer_id: 'reissued' });
  } finally {
    east.resume();
    paused.resume();
  }
  // The cancel answered 204: the registration is released, not left to expire, and nothing moved.
  await expectNoTransferAnywhere(cluster, 'the cancel released it');
  t.like(await cluster.authority('east-1'), { home: 'east', epoch: 1 });
  const audit = await cluster.control('east-1', 'GET', '/authorities/proj/audit');
  t.deepEqual(
    audit.body.records.map((r: { kind: string }) => r.kind),
    ['authority_established'],
    'the cancelled transfer left no audit: the one record is the establish that gave proj its home',
  );
});

test('cut off from the majority after a cancel, a POST of another key answers 503 once the read gives up, without waiting out a probe timeout', async (t) => {
  t.timeout(300_000);
  // A probe timeout far longer than the consensus' read timeout (5 s): the answer must not wait for it.
  const cluster = await startProcessCluster(t, { probeTimeoutMs: 60_000 });
  await cluster.establish('east');
  const { target, taker } = await roles(cluster);
  const body = { ...BODY, target };
  const paused = cluster.byId(`${target}-1`).member.process;
  const east = cluster.byId('east-1').member.process;
  paused.pause();
  try {
    const waiting = cluster.control(taker, 'POST', '/transfers', { body, key: 'waiting', timeoutMs: 240_000 });
    await eventually(async () => (await cluster.control('east-1', 'GET', '/transfers/proj')).body?.id === 'waiting', 'east-1 to see the registered transfer');
    await eventually(async () => (await cluster.control(taker, 'GET', '/transfers/proj', { timeoutMs: 5_000 })).body?.driver === taker, `${taker} to drive it`);
    east.pause();
    // Answered from the plan: no consensus round trip in the way.
    const cancel = await cluster.control(taker, 'DELETE', '/transfers/proj', { timeoutMs: 30_000 });
    t.is(cancel.status, 204, JSON.stringify(cancel.body));
    const ended = await waiting;
    t.is(ended.status, 409, JSON.stringify(ended.body));
    t.like(ended.body, { code: 'transfer_cancelled' });
    // The release of the cancelled registration cannot land; a new request is not held behind it.
    // Bounded well under the probe timeout (60 s) the request used to wait out first, and well over
    // the read timeout (5 s) it answers after.
    const other = await cluster.control(taker, 'POST', '/transfers', { body: { ...body, reason: 'another' }, key: 'another', timeoutMs: 30_000 });
    t.is(other.status, 503, JSON.stringify(other.body));
    t.truthy(other.headers.get('retry-after'), 'a 503 says when to retry');
    t.is(other.headers.get('content-type')?.split(';')[0], 'application/problem+json');
  } finally {
    east.resume();
    paused.resume();
  }
  await expectNoTransferAnywhere(cluster, 'the cancelled one is released once the majority is back');
  t.like(await cluster.authority('east-1'), { home: 'east', epoch: 1 });
});
