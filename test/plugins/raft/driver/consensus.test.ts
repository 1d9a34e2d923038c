import test from 'ava';
import { NotAppendedError, OutcomeUnknownError, ReadUnavailableError } from '@baton/contracts/internal/metadata-consensus.js';
import type { KvCommand } from '@baton/conformance/internal/kv-state-machine.js';
import { SimCluster } from '../support/sim-cluster.js';

const put = (key: string, value: string): KvCommand => ({ op: 'put', key, value });

test('three members elect one leader; proposals on leader and followers commit everywhere in one order', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3']);
  await c.startAll();
  const leader = await c.waitForLeader();
  const follower = [...c.members.values()].find((m) => m !== leader)!;
  const seen = new Map<string, number[]>();
  for (const [id, m] of c.members) m.watch((_v, e) => seen.set(id, [...(seen.get(id) ?? []), e.position.index]));

  const a = await c.settle(leader.propose(put('x', '1')));
  const b = await c.settle(follower.propose(put('x', '2')));
  t.false(a.replayed);
  t.deepEqual(a.result, { op: 'put', previous: null });
  t.deepEqual(b.result, { op: 'put', previous: '1' });
  t.true(b.position.index > a.position.index);

  await c.until(() => [...c.members.values()].every((m) => m.view().applied.index >= b.position.index));
  for (const m of c.members.values()) t.is(m.view().state.data.x, '2');
  const orders = [...seen.values()];
  t.is(orders.length, 3);
  for (const o of orders) t.deepEqual(o, [a.position.index, b.position.index]);
  t.is([...c.members.values()].filter((m) => m.leadership().isLeader).length, 1);
  for (const m of c.members.values()) t.is(m.leadership().leader, leader.self);
  await c.stopAll();
});

test('a retry with the same key returns the committed decision through another leader (replayed)', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 2);
  await c.startAll();
  const first = await c.waitForLeader();
  const original = await c.settle(first.propose(put('k', 'v1'), { idempotencyKey: 'op-1' }));
  t.false(original.replayed);
  // Everyone applies it, then the leader dies; a new leader is elected among the others.
  await c.until(() => [...c.members.values()].every((m) => m.view().applied.index >= original.position.index));
  await c.crash(first.self);
  const second = await c.waitForLeader();
  t.not(second.self, first.self);
  await c.settle(second.propose(put('k', 'v2')));
  const follower = [...c.members.values()].find((m) => m !== second)!;
  const retry = await c.settle(follower.propose(put('k', 'v1'), { idempotencyKey: 'op-1' }));
  t.true(retry.replayed);
  t.deepEqual(retry.position, original.position);
  t.deepEqual(retry.result, original.result);
  // Replaying changed nothing: k still holds the later write.
  t.is(second.view().state.data.k, 'v2');
  await c.stopAll();
});

test('a retry while the first attempt is still in the log joins it instead of appending twice', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 3);
  await c.startAll();
  const leader = await c.waitForLeader();
  const p1 = leader.propose(put('j', '1'), { idempotencyKey: 'same' });
  const p2 = leader.propose(put('j', '1'), { idempotencyKey: 'same' });
  const [r1, r2] = await Promise.all([c.settle(p1), c.settle(p2)]);
  t.deepEqual(r1.position, r2.position);
  t.is(leader.view().state.commandsApplied, 1);
  await c.stopAll();
});

test('a key reused for a different command is refused with NotAppendedError before anything is appended', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 4);
  await c.startAll();
  const leader = await c.waitForLeader();
  const follower = [...c.members.values()].find((m) => m !== leader)!;
  await c.settle(leader.propose(put('a', '1'), { idempotencyKey: 'key' }));
  await c.until(() => follower.view().applied.index >= leader.view().applied.index);
  const last = leader.status().lastIndex;
  for (const m of [leader, follower]) {
    const error = await t.throwsAsync(c.settle(m.propose(put('a', 'DIFFERENT'), { idempotencyKey: 'key' })), { instanceOf: NotAppendedError });
    t.is(error?.reason, 'key_reused');
  }
  // In flight: the first command is appended but not yet committed when the second arrives.
  const inFlight = leader.propose(put('b', '1'), { idempotencyKey: 'key2' });
  const clash = leader.propose(put('b', '2'), { idempotencyKey: 'key2' });
  const clashError = await t.throwsAsync(c.settle(clash), { instanceOf: NotAppendedError });
  t.is(clashError?.reason, 'key_reused');
  await c.settle(inFlight);
  t.is(leader.status().lastIndex, last + 1, 'only the first keyed command was appended');
  await c.stopAll();
});

test('a saturated proposal queue refuses with NotAppendedError and appends nothing', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], { maxQueue: 2 }, 5);
  await c.startAll();
  const leader = await c.waitForLeader();
  const others = [...c.members.keys()].filter((id) => id !== leader.self);
  // Cut the leader off so nothing commits and the queue stays full.
  c.network.partition([leader.self], others);
  const last = leader.status().lastIndex;
  const p1 = leader.propose(put('q', '1'), { timeoutMs: 100_000 });
  const p2 = leader.propose(put('q', '2'), { timeoutMs: 100_000 });
  p1.catch(() => undefined);
  p2.catch(() => undefined);
  const error = await t.throwsAsync(leader.propose(put('q', '3')), { instanceOf: NotAppendedError });
  t.is(error?.reason, 'queue_saturated');
  await c.clock.advanceAsync(5);
  t.is(leader.status().lastIndex, last + 2, 'the refused proposal was not appended');
  await c.stopAll();
});

test('leadership lost while a proposal waits gives OutcomeUnknownError', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 6);
  await c.startAll();
  const leader = await c.waitForLeader();
  const others = [...c.members.keys()].filter((id) => id !== leader.self);
  c.network.partition([leader.self], others);
  const pending = leader.propose(put('lost', '1'), { timeoutMs: 60_000 });
  const error = await t.throwsAsync(c.settle(pending), { instanceOf: OutcomeUnknownError });
  t.is(error?.reason, 'leadership_lost');
  t.false(leader.leadership().isLeader);
  await c.stopAll();
});

test('a proposal that times out after it was sent gives OutcomeUnknownError', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 7);
  await c.startAll();
  const leader = await c.waitForLeader();
  const others = [...c.members.keys()].filter((id) => id !== leader.self);
  c.network.partition([leader.self], others);
  const error = await t.throwsAsync(c.settle(leader.propose(put('slow', '1'), { timeoutMs: 30 })), { instanceOf: OutcomeUnknownError });
  t.is(error?.reason, 'timeout');
  await c.stopAll();
});

test('with no leader in time, a proposal that was never sent gives NotAppendedError(no_leader)', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 8);
  await c.start('n1'); // its peers never start: no leader can exist
  const error = await t.throwsAsync(c.settle(c.get('n1').propose(put('x', '1'), { timeoutMs: 500 })), { instanceOf: NotAppendedError });
  t.is(error?.reason, 'no_leader');
  t.is(c.get('n1').status().lastIndex, 0);
  await c.stopAll();
});

test('read() on a follower includes every write committed before it, even while the follower lags', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 9);
  await c.startAll();
  const leader = await c.waitForLeader();
  const follower = [...c.members.values()].find((m) => m !== leader)!;
  // Slow down the follower's link from the leader so its applied state lags.
  c.network.setLink(leader.self, follower.self, { minDelayMs: 40, maxDelayMs: 40 }, { oneWay: true });
  const w = await c.settle(leader.propose(put('r', 'fresh')));
  t.true(follower.view().applied.index < w.position.index, 'the follower has not applied the write yet');
  const view = await c.settle(follower.read());
  t.true(view.applied.index >= w.position.index);
  t.is(view.state.data.r, 'fresh');
  await c.stopAll();
});

test('read() without a reachable leader fails with ReadUnavailableError', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 10);
  await c.start('n1');
  await t.throwsAsync(c.settle(c.get('n1').read({ timeoutMs: 300 })), { instanceOf: ReadUnavailableError });
  await c.stopAll();
});

test('onLeadership reports the new leader after a failover', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 11);
  await c.startAll();
  const first = await c.waitForLeader();
  const survivor = [...c.members.values()].find((m) => m !== first)!;
  const events: { leader?: string; term: number }[] = [];
  survivor.onLeadership((l) => events.push({ leader: l.leader, term: l.term }));
  await c.crash(first.self);
  const second = await c.waitForLeader();
  await c.until(() => survivor.leadership().leader === second.self);
  t.true(events.some((e) => e.leader === second.self), "the survivor was told who leads now");
  t.is(survivor.leadership().leader, second.self);
  await c.stopAll();
});
