import test from 'ava';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { PlanPacer } from '@baton/stream-transfer/internal/plan-pacer.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';

/** The pacer on a one-member consensus (the leader) with virtual time; a plan of `streams` moves from n1 to n2 executed. */
async function pacedPlan(streams: number, movesPerSecond: number, maxConcurrent = 100) {
  const clock = new VirtualClock(0);
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  const proposed: StreamCommand[] = [];
  const propose = consensus.propose.bind(consensus);
  consensus.propose = (command: StreamCommand, options?: Parameters<typeof propose>[1]) => {
    proposed.push(command);
    return propose(command, options);
  };
  const must = async (command: StreamCommand) => {
    const receipt = await propose(command);
    if (!receipt.result.ok) throw new Error(`${command.type}: ${receipt.result.message}`);
    return receipt.result;
  };
  await must({ type: 'register-node', node: 'n1', address: 'http://n1', slots: 1000 });
  for (let i = 0; i < streams; i++) await must({ type: 'create-stream', stream: `s${i}`, node: 'n1' });
  await must({ type: 'register-node', node: 'n2', address: 'http://n2', slots: 1000 });
  const created = await must({ type: 'create-plan', goal: { type: 'drain', nodes: ['n1'] }, limits: { maxConcurrent, movesPerSecond } });
  await must({ type: 'execute-plan', plan: created.plan! });
  const pacer = new PlanPacer({ consensus, clock, logger: createSilentLogger() });
  return { clock, consensus, pacer, proposed, started: () => consensus.view().state.rebalanceQueue!.talliesNow().started };
}

test('the pacer lets a plan start its moves at its pace, one round at a time', async (t) => {
  const { clock, pacer, started } = await pacedPlan(40, 4);
  pacer.start();
  t.teardown(() => pacer.stop());
  await clock.advanceAsync(1);
  t.is(started(), 1, 'one move at the first round');
  await clock.advanceAsync(5_000);
  // 4 per second over 5 s, the first round's one included.
  t.true(started() >= 20 && started() <= 22, `started ${started()}`);
});

test('a pace below one move a second still moves, at that pace', async (t) => {
  const { clock, pacer, started } = await pacedPlan(10, 0.5);
  pacer.start();
  t.teardown(() => pacer.stop());
  await clock.advanceAsync(1);
  t.is(started(), 1);
  await clock.advanceAsync(10_000);
  t.true(started() >= 5 && started() <= 7, `one every 2 s: started ${started()}`);
});

test('a plan held by maxConcurrent gets no allowance entries past what it can hold: the log stays quiet', async (t) => {
  const { clock, pacer, proposed, started } = await pacedPlan(20, 10, 2);
  pacer.start();
  t.teardown(() => pacer.stop());
  // Nothing settles: 2 moves in flight, the allowance fills to a second's worth, then no entry more.
  await clock.advanceAsync(2_000);
  t.is(started(), 2);
  const allowances = proposed.filter((c) => c.type === 'allow-plan-moves').length;
  await clock.advanceAsync(10_000);
  t.is(proposed.filter((c) => c.type === 'allow-plan-moves').length, allowances, 'no allowance entries while it is full');
});
