import test from 'ava';
import {
  consensusSuite,
  type ConsensusCluster,
  type KvConsensus,
} from '@baton/conformance/internal/consensus-suite.js';
import { FakeCluster } from '@baton/testing/internal/fakes/fake-cluster.js';
import type {
  KvCommand,
  KvResult,
  KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { attemptPasses, collectSuite, findTest } from './collect-suite.js';

type Member = ReturnType<FakeCluster<KvState, KvCommand, KvResult>['member']>;

function threeMembers(
  machine: StateMachine<KvState, KvCommand, KvResult>,
  size: number,
  wrap: (member: Member) => KvConsensus = (m) => m,
): ConsensusCluster {
  const clock = new VirtualClock();
  const ids = Array.from({ length: size }, (_, i) => `n${i + 1}`);
  const cluster = new FakeCluster(machine, { members: ids, clock, delayMs: 3 });
  let spawned = 0;
  return {
    members: ids.map((id) => wrap(cluster.member(id))),
    advance: (ms) => clock.advanceAsync(ms),
    stop: () => cluster.all().forEach((m) => m.stop()),
    depose: () => cluster.depose(),
    isolate: (index) => cluster.isolate(ids[index]),
    heal: () => cluster.heal(),
    spawn: () => {
      const id = `spare${++spawned}`;
      return { id, member: cluster.spawn(id) };
    },
  };
}

// A three-member fake exercises the suite's multi-member paths (forwarding, lagging followers,
// an isolated leader) the way a Raft cluster on virtual time will drive them.
consensusSuite({
  test,
  name: 'FakeCluster (3 members)',
  size: 3,
  supports: { depose: true, isolate: true },
  cluster: ({ size, machine }) => threeMembers(machine, size),
});

function brokenSuite(wrap: (member: Member) => KvConsensus) {
  return collectSuite((registerTest) =>
    consensusSuite({
      test: registerTest,
      name: 'broken cluster',
      size: 3,
      supports: { isolate: true },
      deadlineMs: 2_000,
      cluster: ({ size, machine }) => threeMembers(machine, size, wrap),
    }),
  );
}

const delegate = (m: Member): KvConsensus => ({
  propose: (c, o) => m.propose(c, o),
  read: (o) => m.read(o),
  view: () => m.view(),
  watch: (fn) => m.watch(fn),
  leadership: () => m.leadership(),
  onLeadership: (fn) => m.onLeadership(fn),
  membership: () => m.membership(),
  addVoter: (id, o) => m.addVoter(id, o),
  removeVoter: (id, o) => m.removeVoter(id, o),
});

test('the suite catches followers that serve read() from their lagging local view', async (t) => {
  const suite = brokenSuite((m) => ({ ...delegate(m), read: async () => m.view() }));
  t.false(await attemptPasses(t, findTest(suite, 'a read on any member includes every write')));
});

test('the suite catches a member that answers a replay with a new position', async (t) => {
  const suite = brokenSuite((m) => ({
    ...delegate(m),
    propose: async (c, o) => {
      const receipt = await m.propose(c, o);
      return receipt.replayed ? { ...receipt, position: m.view().applied } : receipt;
    },
  }));
  t.false(await attemptPasses(t, findTest(suite, 'the same key and command replay')));
});

test('the suite catches an isolated member that claims its proposal committed', async (t) => {
  const suite = brokenSuite((m) => ({
    ...delegate(m),
    propose: (c, o) =>
      m.propose(c, o).catch(() => ({
        position: m.view().applied,
        result: { op: 'get', value: null },
        replayed: false,
      })),
  }));
  t.false(await attemptPasses(t, findTest(suite, 'an isolated leader is replaced')));
});
