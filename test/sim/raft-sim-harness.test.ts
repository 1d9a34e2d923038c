import test from 'ava';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import { RaftSimCluster } from '@baton/testing/internal/raft-sim/raft-sim-cluster.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';

// The shared Raft simulation harness (framework/testing/raft-sim) itself: the variant
// simulations trust it to keep storage across crashes and to heal faults one at a time.

type KvRaft = RaftConsensus<KvState, KvCommand, KvResult>;

function kvCluster(
  seed: number,
): RaftSimCluster<KvState, KvCommand, KvResult, KvRaft, MemoryRaftStorage> {
  return new RaftSimCluster({
    voters: ['n1', 'n2', 'n3'],
    seed,
    machine: kvStateMachine,
    factory: {
      storage: () => new MemoryRaftStorage(),
      member: (options) => new RaftConsensus<KvState, KvCommand, KvResult>(options),
    },
  });
}

test('a crashed member restarts on its surviving storage, catches up, and observers see its new incarnation apply', async (t) => {
  const c = kvCluster(5);
  const seen: string[] = [];
  c.onApplied((member, _view, entry) =>
    seen.push(`${member.id}#${member.incarnation}@${entry.position.index}`),
  );
  await c.startAll();
  const leader = await c.waitForLeader();
  await c.settle(leader.propose({ op: 'put', key: 'a', value: '1' }));
  const follower = c.voters.find((id) => id !== leader.self)!;
  await c.until(
    () => c.get(follower).view().state.data.a === '1',
    5_000,
    'the follower to apply a',
  );
  await c.crash(follower);
  t.false(c.isUp(follower));
  await c.settle(leader.propose({ op: 'put', key: 'b', value: '2' }));
  const again = await c.start(follower);
  await c.until(
    () => again.view().state.data.b === '2',
    10_000,
    'the restarted member to catch up',
  );
  t.deepEqual(again.view().state.data, { a: '1', b: '2' });
  t.true(
    seen.some((s) => s.startsWith(`${follower}#1@`)),
    'the new incarnation was observed',
  );
  await c.until(() => c.converged(), 5_000, 'every member to apply the same');
  await c.stopAll();
});

test('faults heal one at a time: healing a partition keeps an isolation in force', async (t) => {
  const c = kvCluster(6);
  const got: string[] = [];
  for (const id of ['p1', 'p2', 'p3']) {
    c.network.transport(id).listen('ping', { onMessage: (from) => got.push(`${from}->${id}`) });
  }
  const partition = c.partition(['p1'], ['p2']);
  c.isolate('p3');
  partition.heal();
  t.deepEqual(c.activeFaults(), ['isolate p3']);
  c.network.transport('p1').send('p2', { channel: 'ping', body: {} });
  c.network.transport('p1').send('p3', { channel: 'ping', body: {} });
  await c.clock.advanceAsync(10);
  t.deepEqual(got, ['p1->p2']);
  c.healAll();
  c.network.transport('p1').send('p3', { channel: 'ping', body: {} });
  await c.clock.advanceAsync(10);
  t.deepEqual(got, ['p1->p2', 'p1->p3']);
});

test('leader loss: with the leader isolated, the others elect a new one in a later term', async (t) => {
  const c = kvCluster(7);
  await c.startAll();
  const old = await c.waitForLeader();
  const term = old.leadership().term;
  const fault = c.isolateLeader();
  t.is(fault?.description, `isolate ${old.self}`);
  await c.until(
    () =>
      [...c.members.values()].some(
        (m) => m !== old && m.leadership().isLeader && m.leadership().term > term,
      ),
    10_000,
    'a new leader',
  );
  fault!.heal();
  await c.until(() => !old.leadership().isLeader, 10_000, 'the old leader to step down');
  t.not(c.leader()?.self, old.self, 'the healed old leader did not take over again');
  await c.stopAll();
});
