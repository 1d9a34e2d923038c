import test from 'ava';
import type { KvCommand } from '@baton/conformance/internal/kv-state-machine.js';
import { NotAppendedError } from '@baton/contracts';
import { SimCluster } from '../support/sim-cluster.js';

const put = (key: string, value: string): KvCommand => ({ op: 'put', key, value });

test('a follower behind the compaction point installs a snapshot that carries the idempotency window', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], { snapshotInterval: 5, snapshotRetain: 0 }, 21);
  await c.startAll();
  const leader = await c.waitForLeader();
  const lagging = [...c.members.values()].find((m) => m !== leader)!;
  const others = [...c.members.keys()].filter((id) => id !== lagging.self);
  c.network.partition([lagging.self], others);
  const keyed = await c.settle(leader.propose(put('w', '1'), { idempotencyKey: 'early' }));
  for (let i = 0; i < 12; i++) await c.settle(leader.propose(put(`k${i}`, String(i))));
  t.true(leader.stats.snapshotsTaken > 0, 'the leader compacted its log');
  c.network.heal();
  await c.until(() => lagging.view().applied.index >= leader.view().applied.index, 10_000, 'the lagging member to catch up');
  t.true(lagging.stats.snapshotsInstalled > 0, 'it caught up through a snapshot');
  t.deepEqual(lagging.view().state.data, leader.view().state.data);
  // The window came with the snapshot: the retry is answered locally, as a replay.
  const retry = await c.settle(lagging.propose(put('w', '1'), { idempotencyKey: 'early' }));
  t.true(retry.replayed);
  t.deepEqual(retry.position, keyed.position);
  await c.stopAll();
});

test('a member restarted from its storage recovers snapshot, log and window', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], { snapshotInterval: 4, snapshotRetain: 2 }, 22);
  await c.startAll();
  const leader = await c.waitForLeader();
  const first = await c.settle(leader.propose(put('a', '1'), { idempotencyKey: 'k-a' }));
  for (let i = 0; i < 9; i++) await c.settle(leader.propose(put(`b${i}`, 'x')));
  const victim = [...c.members.values()].find((m) => m !== leader)!;
  await c.until(() => victim.view().applied.index >= leader.view().applied.index);
  const before = victim.view();
  await c.crash(victim.self);
  const again = await c.start(victim.self);
  await c.until(() => again.view().applied.index >= before.applied.index, 5_000, 'the restarted member to re-apply');
  t.deepEqual(again.view().state.data, before.state.data);
  const retry = await c.settle(again.propose(put('a', '1'), { idempotencyKey: 'k-a' }));
  t.true(retry.replayed);
  t.deepEqual(retry.position, first.position);
  await c.stopAll();
});

test('voters are added and removed one at a time, and apply sees the voters in force', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 23);
  await c.startAll();
  const leader = await c.waitForLeader();
  // n4 joins: it starts knowing only the bootstrap voters, so it waits to be added.
  const n4 = await c.start('n4');
  const follower = [...c.members.values()].find((m) => m !== leader && m !== n4)!;
  await c.settle(follower.addVoter('n4'));
  await c.until(() => [...c.members.values()].every((m) => m.membership().voters.includes('n4')), 5_000, 'everyone to see n4');
  t.deepEqual(leader.membership().voters, ['n1', 'n2', 'n3', 'n4']);
  t.deepEqual(n4.view().state.voters, ['n1', 'n2', 'n3', 'n4'], 'membershipChanged saw the new voters');
  const w = await c.settle(n4.propose(put('from-n4', 'yes')));
  t.deepEqual(w.result, { op: 'put', previous: null });
  // Adding an existing voter changes nothing and succeeds.
  await c.settle(leader.addVoter('n4'));
  const removed = follower.self;
  await c.settle(leader.removeVoter(removed));
  await c.until(() => !leader.membership().voters.includes(removed));
  t.false(leader.membership().voters.includes(removed));
  const after = await c.settle(n4.propose(put('after-removal', '1')));
  t.true(after.position.index > w.position.index);
  await c.stopAll();
});

test('a removal checked against voters that changed since is refused (membership_changed), on the leader and forwarded', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3', 'n4'], {}, 25);
  await c.startAll();
  const leader = await c.waitForLeader();
  const [first, second] = [...c.members.values()].filter((m) => m !== leader).map((m) => m.self);
  // Both removals were checked against the four voters; the first lands.
  const checked = ['n1', 'n2', 'n3', 'n4'];
  await c.settle(leader.removeVoter(first, { expectedVoters: checked }));
  await c.until(() => !leader.membership().voters.includes(first));
  // The second, checked against the same four, is refused wherever it is asked, and changes nothing.
  const follower = [...c.members.values()].find((m) => m !== leader && m.self !== first)!;
  for (const asked of [leader, follower]) {
    const refused = await t.throwsAsync(c.settle(asked.removeVoter(second, { expectedVoters: checked })), { instanceOf: NotAppendedError });
    t.is(refused!.reason, 'membership_changed');
    t.regex(refused!.message, /not the n1, n2, n3, n4 the change was checked against/);
  }
  t.true(leader.membership().voters.includes(second));
  // Checked against the voters in force, it lands.
  await c.settle(follower.removeVoter(second, { expectedVoters: leader.membership().voters }));
  await c.until(() => !leader.membership().voters.includes(second));
  t.false(leader.membership().voters.includes(second));
  await c.stopAll();
});

test('malformed and foreign peer messages are dropped and counted, never crash the member', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 24);
  await c.startAll();
  const leader = await c.waitForLeader();
  const victim = [...c.members.values()].find((m) => m !== leader)!;
  const attacker = c.network.transport('intruder');
  attacker.send(victim.self, { channel: 'raft', body: { nonsense: true } });
  attacker.send(victim.self, { channel: 'raft', body: { cluster: 'baton', message: { type: 'app', from: 'intruder', to: victim.self, term: 'x' } } });
  attacker.send(victim.self, { channel: 'raft', body: { cluster: 'other', message: { type: 'heartbeat', from: 'intruder', to: victim.self, term: 99 } } });
  // Claims to come from the leader: the transport says otherwise.
  attacker.send(victim.self, { channel: 'raft', body: { cluster: 'baton', message: { type: 'heartbeat', from: leader.self, to: victim.self, term: 99, commit: 0 } } });
  attacker.send(victim.self, { channel: 'raft', body: { cluster: 'baton', message: { type: 'app', from: 'intruder', to: victim.self, term: 1 } } });
  // Well-formed, but from a member outside the configuration: it could disrupt elections.
  attacker.send(victim.self, { channel: 'raft', body: { cluster: 'baton', message: { type: 'vote', from: 'intruder', to: victim.self, term: 99, index: 99, logTerm: 99 } } });
  await c.clock.advanceAsync(20);
  t.is(victim.stats.malformedMessages, 2);
  t.is(victim.stats.foreignMessages, 4);
  const term = victim.leadership().term;
  t.true(term < 99, 'the forged term was never adopted');
  const r = await c.settle(victim.propose(put('still', 'alive')));
  t.false(r.replayed);
  await c.stopAll();
});
