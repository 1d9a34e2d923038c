import test from 'ava';
import { ConsensusReadiness } from '@baton/cluster/internal/readiness.js';
import { kvStateMachine } from '@baton/conformance/internal/kv-state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

/** Lets the readiness loop's promise callbacks run after a consensus or clock change. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('ready only once a leader is known and a read since start has caught up; unready again when the leader is lost', async (t) => {
  const clock = new VirtualClock();
  const consensus = new LocalConsensus(kvStateMachine, { self: 'm1' });
  await consensus.propose({ op: 'put', key: 'k', value: 'v' });
  consensus.setLeadership({ isLeader: false });
  const readiness = new ConsensusReadiness(consensus, clock, undefined, { retryMs: 100 });
  readiness.start();
  await settle();
  t.like(readiness.check(), { ready: false, reason: 'no_leader' });

  // A leader is known, but the catch-up read has not succeeded yet (this member cannot serve it).
  consensus.setLeadership({ isLeader: false, leader: 'm2' });
  clock.advance(100);
  await settle();
  t.like(readiness.check(), { ready: false, reason: 'catching_up' });

  consensus.setLeadership({ isLeader: true });
  clock.advance(100);
  await settle();
  t.deepEqual(readiness.check(), { ready: true });
  t.is(readiness.caughtUpIndex, 1);

  consensus.setLeadership({ isLeader: false });
  t.like(readiness.check(), { ready: false, reason: 'no_leader' });
  consensus.setLeadership({ isLeader: false, leader: 'm3' });
  t.deepEqual(readiness.check(), { ready: true }, 'catching up at start is learnt once');

  readiness.stop();
  t.like(readiness.check(), { ready: false, reason: 'stopped' });
});
