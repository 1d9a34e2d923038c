import test from 'ava';
import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import type { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import type { RaftTuning } from '@baton/plugin-raft/internal/driver/options.js';
import { SimCluster } from '../support/sim-cluster.js';

/**
 * The kv register whose every apply costs a millisecond of (virtual) time: the member's event
 * loop is busy with its own work while the other members' clocks, timers and network go on.
 */
function busyKv(clock: { current?: VirtualClock }): StateMachine<KvState, KvCommand, KvResult> {
  return {
    ...kvStateMachine,
    apply(state, command, ctx) {
      clock.current?.advance(1);
      return kvStateMachine.apply(state, command, ctx);
    },
  };
}

async function leaderTermsThroughBacklog(tuning: Partial<RaftTuning>, seed: number) {
  const clock: { current?: VirtualClock } = {};
  const c = new SimCluster(['n1', 'n2', 'n3'], { proposeTimeoutMs: 60_000, ...tuning }, seed, undefined, busyKv(clock));
  await c.startAll();
  const leader = await c.waitForLeader();
  const before = leader.leadership().term;
  clock.current = c.clock;
  // 600 commands at once: 600 ms of applying on every member, several election timeouts.
  const proposals = Array.from({ length: 600 }, (_, i) => leader.propose({ op: 'put', key: `k${i % 7}`, value: `${i}` }).catch((e: Error) => e));
  await c.until(() => [...c.members.values()].every((m) => m.view().applied.index >= 600), 60_000, 'every member to apply the backlog');
  await c.settle(Promise.all(proposals));
  const terms = [...c.members.values()].map((m) => m.leadership().term);
  const yields = leader.stats.loopYields;
  clock.current = undefined;
  await c.stopAll();
  return { before, terms, yields };
}

test('a leader applying a long backlog hands the event loop back between bounded steps and keeps its term', async (t) => {
  const { before, terms, yields } = await leaderTermsThroughBacklog({ maxCommittedPerReady: 8, loopSliceMs: 5 }, 41);
  t.deepEqual(terms, [before, before, before], 'no member saw another term');
  t.true(yields > 10, `${yields} yields`);
});

test('the same backlog applied without handing the loop back loses the leadership (what the slices prevent)', async (t) => {
  const { before, terms } = await leaderTermsThroughBacklog({ maxCommittedPerReady: 1_000, loopSliceMs: Infinity }, 41);
  t.true(terms.some((term) => term > before), `terms ${terms.join(', ')} after ${before}`);
});
