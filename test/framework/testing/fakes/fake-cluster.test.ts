import test from 'ava';
import {
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type Leadership,
} from '@baton/contracts/internal/metadata-consensus.js';
import { FakeCluster } from '@baton/testing/internal/fakes/fake-cluster.js';
import { kvStateMachine } from '@baton/conformance/internal/kv-state-machine.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

function setup() {
  const clock = new VirtualClock();
  const cluster = new FakeCluster(kvStateMachine, {
    members: ['n1', 'n2', 'n3'],
    clock,
    delayMs: 5,
    electionTimeoutMs: 100,
  });
  return {
    clock,
    cluster,
    n1: cluster.member('n1'),
    n2: cluster.member('n2'),
    n3: cluster.member('n3'),
  };
}

test('a follower forwards, and answers once it has applied the entry itself', async (t) => {
  const { clock, n1, n2, n3 } = setup();
  let receipt: unknown;
  void n2.propose({ op: 'put', key: 'k', value: 'v' }).then((r) => (receipt = r));
  await clock.advanceAsync(5);
  t.is(n1.view().state.data.k, 'v', 'the leader applies at commit');
  t.is(n3.view().applied.index, 0, 'the other follower lags');
  t.is(receipt, undefined);
  await clock.advanceAsync(5);
  t.deepEqual(receipt, {
    position: { term: 1, index: 1 },
    result: { op: 'put', previous: null },
    replayed: false,
  });
  t.is(n2.view().state.data.k, 'v');
});

test('an isolated leader strands proposals until the majority elects another, then learns on heal', async (t) => {
  const { clock, cluster, n1, n2, n3 } = setup();
  const heard: Leadership[] = [];
  n1.onLeadership((l) => heard.push(l));
  cluster.isolate('n1');
  const stranded = n1.propose({ op: 'put', key: 'k', value: 'lost' });
  stranded.catch(() => {});
  await t.throwsAsync(n1.read(), { instanceOf: ReadUnavailableError });
  await clock.advanceAsync(100);
  t.deepEqual(n2.leadership(), { self: 'n2', isLeader: true, leader: 'n2', term: 2 });
  t.is(n3.leadership().leader, 'n2');
  t.true(n1.leadership().isLeader, 'the isolated leader does not know yet');
  await clock.advanceAsync(1);
  const kept = n3.propose({ op: 'put', key: 'k', value: 'kept' });
  await clock.advanceAsync(10);
  t.is((await kept).position.term, 2);
  cluster.heal();
  const error = await t.throwsAsync(stranded, { instanceOf: OutcomeUnknownError });
  t.is(error?.reason, 'leadership_lost');
  t.deepEqual(heard, [{ self: 'n1', isLeader: false, leader: 'n2', term: 2 }]);
  await clock.advanceAsync(10);
  t.is(n1.view().state.data.k, 'kept');
});

test('an isolated follower refuses at once: nothing was appended', async (t) => {
  const { cluster, n3 } = setup();
  cluster.isolate('n3');
  const error = await t.throwsAsync(n3.propose({ op: 'get', key: 'k' }), {
    instanceOf: NotAppendedError,
  });
  t.is(error?.reason, 'no_leader');
});

test('a stranded proposal times out as outcome unknown', async (t) => {
  const { clock, cluster, n1 } = setup();
  cluster.isolate('n1');
  const stranded = n1.propose({ op: 'put', key: 'k', value: 'v' }, { timeoutMs: 50 });
  stranded.catch(() => {});
  await clock.advanceAsync(50);
  t.is((await t.throwsAsync(stranded, { instanceOf: OutcomeUnknownError }))?.reason, 'timeout');
});

test('without a majority nobody is elected', async (t) => {
  const { clock, cluster, n2, n3 } = setup();
  cluster.isolate('n1');
  cluster.isolate('n2');
  await clock.advanceAsync(500);
  t.false(n2.leadership().isLeader || n3.leadership().isLeader);
  t.is(
    (await t.throwsAsync(n3.propose({ op: 'get', key: 'k' }), { instanceOf: NotAppendedError }))
      ?.reason,
    'no_leader',
  );
});
