import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { Cluster } from './cluster-fixture.js';

// Seed 000, "Crashes": every step is idempotent and driven by state that survives crashes.

async function twoNodes(): Promise<Cluster> {
  const cluster = new Cluster();
  await cluster.addNode('a');
  await cluster.addNode('b');
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 'stream s open on a');
  return cluster;
}


test('source crashes before completing: the pending record stays, and on restart its WAL recovery closes and it completes', async (t) => {
  const cluster = await twoNodes();
  await cluster.node('a').append('s', ['a0', 'a1']);
  cluster.crash('a');
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  cluster.clock.advance(5_000);
  await cluster.quiesce();
  t.truthy(cluster.state.transfer('s'), 'nothing settles while the source is down');
  t.is(cluster.state.stream('s')!.state, 'open');
  await cluster.restart('a');
  await cluster.settled();
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2, tail: 2 });
  await cluster.until(() => cluster.serving('s'), 'b serving');
  t.like(await cluster.node('b').append('s', ['b2']), { first: 2, epoch: 2 });
  t.deepEqual((await cluster.node('b').read('s', 0, 10)).map((r) => r.body), ['a0', 'a1', 'b2']);
  await cluster.stopAll();
});

test('records the source logged but never flushed are flushed by its recovery before it closes', async (t) => {
  const cluster = await twoNodes();
  await cluster.node('a').append('s', ['durable']);
  cluster.store.failWith(new StoreUnavailableError('memory object store', 'down for the test'));
  const unacked = cluster.node('a').append('s', ['logged-only']).catch((error: unknown) => error);
  await cluster.quiesce();
  cluster.crash('a');
  t.truthy(await unacked, 'the append was never acknowledged');
  cluster.store.failWith(undefined);
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.restart('a');
  await cluster.settled();
  t.is(cluster.state.stream('s')!.tail, 2, 'the close includes the recovered record');
  t.deepEqual((await cluster.node('b').read('s', 0, 10)).map((r) => r.body), ['durable', 'logged-only']);
  await cluster.stopAll();
});

test('source crashes after proposing a completion that landed: the retry is a harmless duplicate', async (t) => {
  const cluster = await twoNodes();
  await cluster.node('a').append('s', ['x']);
  cluster.failProposals('complete', 1, true);
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.until(() => !cluster.state.transfer('s'), 'completion applied', 5_000);
  // The source never learnt the answer; it crashes and comes back.
  cluster.crash('a');
  await cluster.restart('a');
  cluster.clock.advance(1_000);
  await cluster.quiesce();
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2, tail: 1 });
  const completions = cluster.consensus.log().filter((e) => e.command.type === 'complete');
  t.true(completions[0].result.ok);
  t.true(completions.slice(1).every((e) => e.result.ok && e.result.duplicate === true), 'later completions change nothing');
  // The retry a source sends when it never learnt the answer: accepted as a duplicate, no change.
  const before = structuredClone(cluster.state.toSnapshot());
  const retry = await cluster.consensus.propose({ type: 'complete', stream: 's', source: 'a', target: 'b', epoch: 1 });
  t.like(retry.result, { ok: true, duplicate: true });
  t.deepEqual(cluster.state.toSnapshot(), before);
  await cluster.until(() => cluster.serving('s'), 'b serving');
  t.like(await cluster.node('b').append('s', ['y']), { first: 1, epoch: 2 });
  await cluster.stopAll();
});

test('source crashes after proposing a completion that did not land: the once-per-second retry settles it', async (t) => {
  const cluster = await twoNodes();
  cluster.failProposals('complete', 2);
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.settled(10_000);
  const times = cluster.attempts.filter((a) => a.command.type === 'complete').map((a) => a.at);
  t.is(times.length, 3, 'two refused attempts, then the one that landed');
  for (let i = 1; i < times.length; i++) {
    const gap = times[i] - times[i - 1];
    t.true(gap >= 1 && gap <= 1_000, `retry ${i} came ${gap} ms after the previous attempt`);
  }
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2 });
  await cluster.stopAll();
});

test('a close whose proposal was lost while the source crashed is proposed again from the WAL', async (t) => {
  const cluster = await twoNodes();
  await cluster.node('a').append('s', ['kept']);
  cluster.failProposals('close', 1);
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.until(() => cluster.attempts.some((a) => a.command.type === 'close'), 'a close attempt', 5_000);
  cluster.crash('a');
  t.is(cluster.state.stream('s')!.state, 'open', 'the close never landed');
  await cluster.restart('a');
  await cluster.settled();
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2, tail: 1 });
  await cluster.stopAll();
});

test('target crashes after opening and accepting appends: it recovers, closes at its epoch and reopens at the next', async (t) => {
  const cluster = await twoNodes();
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.settled();
  await cluster.until(() => cluster.serving('s'), 'b serving');
  await cluster.node('b').append('s', ['b0', 'b1']);
  cluster.crash('b');
  await cluster.restart('b');
  await cluster.until(() => cluster.serving('s'), 'b serving again');
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 3, tail: 2, state: 'open' });
  t.like(await cluster.node('b').append('s', ['b2']), { first: 2, epoch: 3 });
  t.deepEqual((await cluster.node('a').read('s', 0, 10)).map((r) => r.body), ['b0', 'b1', 'b2']);
  await cluster.stopAll();
});

test('target crashes before the completion: it opens at E+1 when it comes back', async (t) => {
  const cluster = await twoNodes();
  cluster.crash('b');
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  await cluster.settled();
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2 });
  t.false(cluster.serving('s'));
  await cluster.restart('b');
  await cluster.until(() => cluster.serving('s'), 'b pre-warms after restart');
  t.is(cluster.node('b').session('s')!.epoch, 2);
  await cluster.stopAll();
});

test('leader loss: steps fail while there is no leader and settle within a second once one is back', async (t) => {
  const cluster = await twoNodes();
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  cluster.consensus.setLeadership({ isLeader: false });
  cluster.clock.advance(3_000);
  await cluster.quiesce();
  t.truthy(cluster.state.transfer('s'), 'nothing can be committed without a leader');
  cluster.consensus.setLeadership({ isLeader: true });
  const regained = cluster.clock.now();
  await cluster.settled();
  t.true(cluster.clock.now() - regained <= 1_000, 'the once-per-second retry picks it up');
  t.like(cluster.state.stream('s')!, { owner: 'b', epoch: 2 });
  await cluster.stopAll();
});

test('a refused step is retried on the next once-per-second pass, not in a hot loop', async (t) => {
  const cluster = await twoNodes();
  cluster.failProposals('close', 3);
  await cluster.must({ type: 'transfer', stream: 's', target: 'b' });
  cluster.clock.advance(500);
  await cluster.quiesce();
  t.is(cluster.attempts.filter((a) => a.command.type === 'close').length, 1, 'one attempt in the first half second');
  await cluster.settled(10_000);
  t.is(cluster.attempts.filter((a) => a.command.type === 'close').length, 4);
  await cluster.stopAll();
});
