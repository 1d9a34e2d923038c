import test from 'ava';
import { eventually } from '../eventually.js';
import { startProcessCluster, type Answer, type ProcessCluster } from './process-cluster.js';

// Planned transfers across three real authority host processes on one Raft over HTTP (peer
// credentials as `baton up` writes them): the barrier, the one-transfer rule and the cancel hold
// for the whole cluster, whichever member takes the request.

const MOVE_TO_NORTH = { authority: 'proj', source: 'east', target: 'north', reason: 'drain east' };

/** Writes at east until `stop` resolves, recording every acknowledged serial and its epoch. */
function writer(cluster: ProcessCluster, stop: Promise<unknown>) {
  const acknowledged: { serial: number; epoch: number }[] = [];
  let refusedFrozen = 0;
  let stopped = false;
  void stop.finally(() => (stopped = true));
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      const res = await cluster.write('east-1', `racing-${i}`, 1).catch(() => undefined);
      if (res?.status === 200) acknowledged.push(res.body);
      else if (res?.status === 503) {
        refusedFrozen += 1;
        if (!res.headers.get('retry-after')) throw new Error('a frozen write is refused without Retry-After');
      }
    }
  })();
  return { acknowledged, done, frozen: () => refusedFrozen };
}

async function acknowledge(cluster: ProcessCluster, count: number, label: string): Promise<number> {
  let serial = 0;
  for (let i = 0; i < count; i++) {
    const res = await cluster.write('east-1', `${label}-${i}`, 1);
    if (res.status !== 200) throw new Error(`write answered ${res.status}: ${JSON.stringify(res.body)}`);
    serial = res.body.serial;
  }
  return serial;
}

/**
 * POSTs a transfer under `key` until it has an outcome: a 503 (no leader for a moment, the
 * outcome unknown after a leader change) is retried under the same key, as an operator does.
 */
async function decided(cluster: ProcessCluster, at: string, body: unknown, key: string): Promise<Answer> {
  let answer: Answer | undefined;
  await eventually(async () => {
    answer = await cluster.control(at, 'POST', '/transfers', { body, key, timeoutMs: 240_000 });
    return answer.status !== 503;
  }, `transfer ${key} to reach an outcome`, 240_000);
  return answer!;
}

function expectStatus(res: Answer, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what} answered ${res.status}, not ${status}: ${JSON.stringify(res.body)}`);
}

test('a paused target: the POST answers only once the target has every write the source acknowledged during the transfer', async (t) => {
  t.timeout(300_000);
  const cluster = await startProcessCluster(t);
  await cluster.establish('east');
  const first = await acknowledge(cluster, 1, 'before');
  const north = cluster.byId('north-1').member.process;
  north.pause();
  let resumed = false;
  try {
    const answer = decided(cluster, 'east-1', MOVE_TO_NORTH, 'paused-target');
    await eventually(async () => (await cluster.control('east-1', 'GET', '/transfers/proj')).status === 200, 'the transfer to be registered');
    // Four more writes acknowledged under epoch 1 while the transfer waits on the paused target.
    const during = await acknowledge(cluster, 4, 'during');
    t.true(during >= first + 4);
    const racing = writer(cluster, answer);
    north.resume();
    resumed = true;
    const res = await answer;
    await racing.done;
    t.is(res.status, 200, JSON.stringify(res.body));
    t.like(res.body, { id: 'paused-target', source: 'east', target: 'north', epoch: 2 });
    const applied = await cluster.applied('north-1', 'east-1');
    const ackedUnderOld = [{ serial: during, epoch: 1 }, ...racing.acknowledged].filter((w) => w.epoch === 1);
    const highest = Math.max(...ackedUnderOld.map((w) => w.serial));
    t.true(res.body.barrier >= highest, `the final serial ${res.body.barrier} covers every write acknowledged under epoch 1 (through ${highest})`);
    t.true(applied.serial >= res.body.barrier, `north applied east's feed through ${applied.serial}, the barrier is ${res.body.barrier}`);
    t.like(await cluster.authority('east-1'), { home: 'north', epoch: 2 });
    const stale = await cluster.write('east-1', 'after-the-move', 1);
    t.not(stale.status, 200, 'the old home takes no write under the old epoch');
    t.log(`${racing.acknowledged.length} racing writes acknowledged, ${racing.frozen()} refused while frozen (503 + Retry-After)`);
  } finally {
    if (!resumed) north.resume();
  }
});

test('a transfer POSTed at a member that is not the source takes the barrier from the source, and one POSTed at its target commits', async (t) => {
  t.timeout(300_000);
  const cluster = await startProcessCluster(t);
  await cluster.establish('east');
  const acked = await acknowledge(cluster, 8, 'east-write');
  const west = await cluster.control('west-1', 'GET', '/authorities/proj');
  expectStatus(west, 200, 'proj at west-1');
  const res = await decided(cluster, 'west-1', MOVE_TO_NORTH, 'posted-at-west');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.true(res.body.barrier >= acked, `barrier ${res.body.barrier} is east's serial (${acked}), not west-1's own`);
  const applied = await cluster.applied('north-1', 'east-1');
  t.true(applied.serial >= acked, `north applied east's feed through ${applied.serial} before the commit answered`);
  await eventually(async () => (await cluster.authority('west-1')).home === 'north', 'west-1 to apply the move');
  t.like(await cluster.authority('west-1'), { home: 'north', epoch: 2 });
  // Back to east, POSTed at east-1, the target: it reads its own replica of north's feed (its
  // peer credential names the others, so asking its own peer route would answer 401 for good).
  await eventually(async () => (await cluster.write('north-1', 'north-write-0', 2)).status === 200, 'north-1 to take a write as the home');
  let northAcked = 0;
  for (let i = 1; i <= 3; i++) {
    const w = await cluster.write('north-1', `north-write-${i}`, 2);
    expectStatus(w, 200, `write ${i} at north-1`);
    northAcked = w.body.serial;
  }
  const back = await decided(cluster, 'east-1', { authority: 'proj', source: 'north', target: 'east', reason: 'back home' }, 'posted-at-target');
  t.is(back.status, 200, JSON.stringify(back.body));
  t.true(back.body.barrier >= northAcked, `barrier ${back.body.barrier} is north's serial (${northAcked})`);
});

test('one transfer per authority cluster-wide: a second POST at another member answers 409 naming the running one; a cancel there never answers 204 for a transfer that commits', async (t) => {
  t.timeout(300_000);
  const cluster = await startProcessCluster(t);
  await cluster.establish('east');
  await acknowledge(cluster, 1, 'before');
  const north = cluster.byId('north-1').member.process;
  north.pause();
  let resumed = false;
  try {
    const running = decided(cluster, 'east-1', MOVE_TO_NORTH, 'first-move');
    await eventually(async () => (await cluster.control('west-1', 'GET', '/transfers/proj')).body?.id === 'first-move', 'west-1 to see the registered transfer');
    const second = await cluster.control('west-1', 'POST', '/transfers', { body: { ...MOVE_TO_NORTH, target: 'west', reason: 'rebalance' }, key: 'second-move' });
    t.is(second.status, 409, JSON.stringify(second.body));
    t.like(second.body, { code: 'transfer_in_progress', running_id: 'first-move' });
    t.regex(second.body.detail, /first-move/);

    // A cancel at west-1 of the transfer east-1 drives: 204, and the move never happens.
    const cancelled = await cluster.control('west-1', 'DELETE', '/transfers/proj');
    t.is(cancelled.status, 204, JSON.stringify(cancelled.body));
    const ended = await running;
    t.is(ended.status, 409, JSON.stringify(ended.body));
    north.resume();
    resumed = true;
    for (const m of cluster.members) {
      await eventually(async () => (await cluster.control(m.id, 'GET', '/transfers/proj')).status === 404, `${m.id} to hold no transfer of proj`);
    }
    t.like(await cluster.authority('east-1'), { home: 'east', epoch: 1 });
    const audit = await cluster.control('east-1', 'GET', '/authorities/proj/audit');
    t.deepEqual(
      audit.body.records.map((r: { kind: string }) => r.kind),
      ['authority_established'],
      'the cancelled transfer left no audit: the one record is the establish that gave proj its home',
    );
  } finally {
    if (!resumed) north.resume();
  }

  // A cancel at another member racing the commit resolves to exactly one of the two.
  const outcomes = { cancelled: 0, committed: 0 };
  let home = 'east';
  for (let round = 0; round < 4; round++) {
    const target = home === 'east' ? 'north' : 'east';
    const body = { authority: 'proj', source: home, target, reason: `race ${round}` };
    const post = cluster.control(`${home}-1`, 'POST', '/transfers', { body, key: `race-${round}`, timeoutMs: 240_000 });
    await eventually(async () => (await cluster.control('west-1', 'GET', '/transfers/proj')).status === 200 || (await cluster.authority('west-1')).home === target, `round ${round} to be registered or committed`);
    const cancel = await cluster.control('west-1', 'DELETE', '/transfers/proj');
    const answered = await post;
    // Whatever the POST answered (a 503 leaves the outcome to the background), the round ends
    // once no member holds the transfer; the source member has applied its outcome by then.
    for (const m of cluster.members) {
      await eventually(async () => (await cluster.control(m.id, 'GET', '/transfers/proj')).status === 404, `round ${round} to end at ${m.id}`);
    }
    const now = await cluster.authority(`${home}-1`);
    if (cancel.status === 204) {
      outcomes.cancelled += 1;
      t.is(now.home, home, `round ${round}: a cancel answered 204, yet proj moved (the POST answered ${answered.status})`);
      t.not(answered.status, 200, `round ${round}: cancelled, yet the POST answered 200`);
    } else {
      outcomes.committed += 1;
      t.is(cancel.status, 409, `round ${round}: ${JSON.stringify(cancel.body)}`);
      t.is(now.home, target, `round ${round}: the cancel answered 409, so the move stands`);
      home = target;
    }
  }
  t.log(`cancel racing the commit: ${outcomes.cancelled} cancelled, ${outcomes.committed} committed`);
});

test('a refused POST (wrong source) keeps the recently abandoned record: a repeated cancel still answers 204', async (t) => {
  t.timeout(300_000);
  const cluster = await startProcessCluster(t);
  await cluster.establish('east');
  // A committed move first, so a lost record would be answered with "already committed".
  const moved = await decided(cluster, 'east-1', { authority: 'proj', source: 'east', target: 'west', reason: 'first' }, 'committed-earlier');
  expectStatus(moved, 200, 'the first move');
  // The target is paused so the transfer waits. Not the Raft leader: with the leader paused the
  // registration answers 503 (outcome unknown) until another is elected, and the retry of that
  // 503 under the same key, coming after the cancel, would register the transfer anew.
  const { leader } = (await cluster.control('west-1', 'GET', '/cluster', { timeoutMs: 10_000 })).body as { leader?: string };
  const target = leader === 'north-1' ? 'east' : 'north';
  const paused = cluster.byId(`${target}-1`).member.process;
  paused.pause();
  let resumed = false;
  try {
    const waiting = decided(cluster, 'west-1', { authority: 'proj', source: 'west', target, reason: 'waits' }, 'abandoned');
    await eventually(async () => (await cluster.control('west-1', 'GET', '/transfers/proj')).status === 200, 'the transfer to be registered');
    expectStatus(await cluster.control('west-1', 'DELETE', '/transfers/proj'), 204, 'the cancel');
    t.is((await waiting).status, 409);
    const wrong = await cluster.control('west-1', 'POST', '/transfers', { body: { authority: 'proj', source: 'east', target: 'north', reason: 'wrong from' }, key: 'wrong-from' });
    t.is(wrong.status, 409, JSON.stringify(wrong.body));
    t.like(wrong.body, { code: 'move_refused.source_not_home' });
    const again = await cluster.control('west-1', 'DELETE', '/transfers/proj');
    t.is(again.status, 204, `the repeated cancel: ${JSON.stringify(again.body)}`);
  } finally {
    if (!resumed) paused.resume();
    resumed = true;
  }
});

test('a registered transfer survives the restart of the member that took it: the others still hold it, the source takes writes, and its key resumes it there to one commit', async (t) => {
  t.timeout(300_000);
  const cluster = await startProcessCluster(t);
  await cluster.establish('east');
  await acknowledge(cluster, 1, 'before');
  // The paused target is never the Raft leader (its pause would turn the registration into a
  // 503); the member that takes the POST and restarts is the third one.
  const { leader } = (await cluster.control('east-1', 'GET', '/cluster', { timeoutMs: 10_000 })).body as { leader?: string };
  const target = leader === 'north-1' ? 'west' : 'north';
  const taker = target === 'north' ? 'west-1' : 'north-1';
  const body = { authority: 'proj', source: 'east', target, reason: 'survives a restart' };
  const paused = cluster.byId(`${target}-1`).member.process;
  paused.pause();
  let resumed = false;
  try {
    const first = cluster.control(taker, 'POST', '/transfers', { body, key: 'survivor', timeoutMs: 240_000 }).catch((error: Error) => error);
    await eventually(async () => (await cluster.control('east-1', 'GET', '/transfers/proj')).body?.id === 'survivor', 'east-1 to see the registered transfer');
    const restarted = cluster.byId(taker).member.process;
    await restarted.stop();
    const answered = await first;
    t.log(`the POST at ${taker} answered ${answered instanceof Error ? answered.message : `${answered.status} ${JSON.stringify(answered.body)}`} as it stopped`);
    // Not "cancelled, nothing moved": the registration stays, a retry under the key resumes it.
    t.true(answered instanceof Error || (answered.status === 503 && answered.headers.get('retry-after') !== null), 'a stopping member answers 503 + Retry-After (or nothing)');
    restarted.start();
    // Back with east (the target still paused), the cluster has a quorum again: the registration
    // is still there. Asked from its first answer on, the restarted member catches up before it
    // says "no transfer": a 503 while it has no leader, never a 404.
    const notFound: unknown[] = [];
    await eventually(async () => {
      const res = await cluster.control(taker, 'GET', '/transfers/proj', { timeoutMs: 5_000 });
      if (res.status === 404) notFound.push(res.body);
      return res.body?.id === 'survivor';
    }, `${taker} to show the registered transfer after its restart`, 90_000);
    t.deepEqual(notFound, [], `${taker} answered 404 for the registered transfer after its restart`);
    const status = await cluster.control('east-1', 'GET', '/transfers/proj');
    t.like(status.body, { id: 'survivor', source: 'east', target, frozen: false });
    const second = await cluster.control('east-1', 'POST', '/transfers', { body: { ...body, reason: 'another' }, key: 'second' });
    t.is(second.status, 409, JSON.stringify(second.body));
    t.like(second.body, { code: 'transfer_in_progress', running_id: 'survivor' });
    let during = 0;
    await eventually(async () => {
      const res = await cluster.write('east-1', 'after the restart', 1);
      if (res.status === 200) during = res.body.serial;
      return res.status === 200;
    }, 'east to take a write again (the restarted member froze nothing)');
    paused.resume();
    resumed = true;
    const res = await decided(cluster, taker, body, 'survivor');
    t.is(res.status, 200, JSON.stringify(res.body));
    t.like(res.body, { id: 'survivor', source: 'east', target, epoch: 2 });
    t.true(res.body.barrier >= during, `the barrier ${res.body.barrier} covers the write acknowledged after the restart (${during})`);
    const applied = await cluster.applied(`${target}-1`, 'east-1');
    t.true(applied.serial >= res.body.barrier, `${target}-1 applied east's feed through ${applied.serial}, the barrier is ${res.body.barrier}`);
    const again = await decided(cluster, 'east-1', body, 'survivor');
    t.deepEqual(again.body, res.body, 'the key names one move, wherever it is reissued');
    t.like(await cluster.authority('east-1'), { home: target, epoch: 2 });
  } finally {
    if (!resumed) paused.resume();
  }
});
