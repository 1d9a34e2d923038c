import test from 'ava';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import { MaintenanceScheduler } from '@baton/stream-transfer/internal/maintenance-scheduler.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { AppliedLog } from './metadata-fixture.js';

const budget = { maxNodes: 1 };
const HOUR = 3_600_000;

function zoned(): AppliedLog {
  const log = new AppliedLog();
  for (const [node, zone] of [['a', 'z1'], ['b', 'z1'], ['c', 'z2'], ['d', 'z2']] as const) {
    log.must({ type: 'register-node', node, address: `http://${node}`, slots: 10, labels: { zone } });
  }
  return log;
}

test('a window is scheduled on a node; one more overlapping window past the budget is refused, one after it is not', (t) => {
  const log = zoned();
  t.like(log.apply({ type: 'schedule-maintenance', node: 'a', startAt: 1_000, endAt: 1_000 + HOUR, movesPerSecond: 5, budget }), { ok: true });
  t.like(log.state.node('a')!.maintenance, { startAt: 1_000, endAt: 1_000 + HOUR, movesPerSecond: 5, active: false });
  t.like(log.apply({ type: 'schedule-maintenance', node: 'b', startAt: HOUR / 2, endAt: 2 * HOUR, movesPerSecond: 5, budget }), { ok: false, reason: 'maintenance_budget' });
  t.like(log.apply({ type: 'schedule-maintenance', node: 'b', startAt: 2 * HOUR, endAt: 3 * HOUR, movesPerSecond: 5, budget }), { ok: true });
  // Rescheduling a window that has not begun replaces it.
  t.like(log.apply({ type: 'schedule-maintenance', node: 'a', startAt: 5 * HOUR, endAt: 6 * HOUR, movesPerSecond: 1, budget }), { ok: true });
  t.like(log.state.node('a')!.maintenance, { startAt: 5 * HOUR, movesPerSecond: 1 });
  t.like(log.apply({ type: 'schedule-maintenance', node: 'zz', startAt: 0, endAt: 1, movesPerSecond: 1, budget }), { ok: false, reason: 'unknown_node' });
});

test('with oneValueOf, overlapping windows must share one label value (one zone at a time)', (t) => {
  const log = zoned();
  const zoneAtATime = { maxNodes: 3, oneValueOf: 'zone' };
  log.must({ type: 'schedule-maintenance', node: 'a', startAt: 0, endAt: HOUR, movesPerSecond: 5, budget: zoneAtATime });
  t.like(log.apply({ type: 'schedule-maintenance', node: 'b', startAt: 0, endAt: HOUR, movesPerSecond: 5, budget: zoneAtATime }), { ok: true });
  t.like(log.apply({ type: 'schedule-maintenance', node: 'c', startAt: 0, endAt: HOUR, movesPerSecond: 5, budget: zoneAtATime }), { ok: false, reason: 'maintenance_budget' });
});

test('the window begins: the node drains and takes no new stream; it ends: undrained and returning; then an ordinary node again', (t) => {
  const log = zoned();
  for (let i = 0; i < 4; i++) log.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  log.must({ type: 'schedule-maintenance', node: 'a', startAt: 0, endAt: HOUR, movesPerSecond: 5, budget });
  const begun = log.apply({ type: 'begin-maintenance', node: 'a' });
  t.like(begun, { ok: true, node: 'a' });
  t.true(log.state.node('a')!.draining);
  t.is(log.state.outgoingCount('a'), 4, 'the drain started every stream');
  t.like(log.apply({ type: 'begin-maintenance', node: 'a' }), { ok: true, duplicate: true });
  for (const transfer of [...log.state.transfers()]) log.settle(transfer.stream);
  t.not(log.apply({ type: 'create-stream', stream: 'new', node: 'a' }).ok, true, 'no new stream on a node in maintenance');
  // Re-registering (the node restarted) keeps it in maintenance.
  log.must({ type: 'register-node', node: 'a', address: 'http://a2', slots: 10, labels: { zone: 'z1' } });
  t.like(log.state.node('a')!, { draining: true, maintenance: { active: true } });
  t.like(log.apply({ type: 'end-maintenance', node: 'a' }), { ok: true });
  t.like(log.state.node('a')!, { draining: false, returning: { movesPerSecond: 5 } });
  t.is(log.state.node('a')!.maintenance, undefined);
  t.like(log.apply({ type: 'maintenance-returned', node: 'a' }), { ok: true });
  t.is(log.state.node('a')!.returning, undefined);
});

/** The scheduler on a one-member consensus (the leader) with virtual time; transfers are settled by hand. */
function scheduled() {
  const clock = new VirtualClock(0);
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  const scheduler = new MaintenanceScheduler({ consensus, clock, logger: createSilentLogger() });
  const must = async (command: StreamCommand) => {
    const receipt = await consensus.propose(command);
    if (!receipt.result.ok) throw new Error(`${command.type}: ${receipt.result.message}`);
  };
  const settleAll = async () => {
    const state = consensus.view().state;
    for (const pending of [...state.transfers()]) {
      const record = state.stream(pending.stream)!;
      await must({ type: 'close', stream: pending.stream, node: pending.source, epoch: record.epoch, tail: record.tail, producers: record.producers });
      await must({ type: 'complete', stream: pending.stream, source: pending.source, target: pending.target, epoch: record.epoch });
    }
  };
  return { clock, consensus, scheduler, must, settleAll };
}

test('the scheduler begins and ends a window at its times and hands streams back at the window\'s pace, then clears the mark', async (t) => {
  const { clock, consensus, scheduler, must, settleAll } = scheduled();
  for (const node of ['a', 'b']) await must({ type: 'register-node', node, address: `http://${node}`, slots: 50 });
  for (let i = 0; i < 40; i++) await must({ type: 'create-stream', stream: `s${i}`, node: i % 2 === 0 ? 'a' : 'b' });
  await must({ type: 'schedule-maintenance', node: 'a', startAt: 1_000, endAt: 11_000, movesPerSecond: 2, budget });
  scheduler.start();
  t.teardown(() => scheduler.stop());
  await clock.advanceAsync(900);
  t.false(consensus.view().state.node('a')!.draining, 'not before its start');
  await clock.advanceAsync(400);
  t.true(consensus.view().state.node('a')!.draining, 'draining once it began');
  await settleAll();
  t.is(consensus.view().state.ownedCount('a'), 0);
  await clock.advanceAsync(9_000);
  t.true(consensus.view().state.node('a')!.draining, 'still in maintenance before its end');
  await clock.advanceAsync(1_000);
  t.like(consensus.view().state.node('a')!, { draining: false, returning: { movesPerSecond: 2 } });

  // Streams come back at 2 per second: count the moves started over 2 s of virtual time.
  let handedBack = consensus.view().state.transferCount;
  await settleAll();
  for (let step = 0; step < 8; step++) {
    await clock.advanceAsync(250);
    handedBack += consensus.view().state.transferCount;
    await settleAll();
  }
  t.true(handedBack >= 3 && handedBack <= 6, `about 4 moves in 2 s at 2 per second, saw ${handedBack}`);
  t.log(`${handedBack} of the 20 streams to hand back were moved in the first 2.25 s`);
  // Left to run, it hands back until the two nodes are even, then clears the mark.
  for (let step = 0; step < 80 && consensus.view().state.node('a')!.returning; step++) {
    await clock.advanceAsync(250);
    await settleAll();
  }
  t.is(consensus.view().state.node('a')!.returning, undefined);
  t.is(consensus.view().state.ownedCount('a'), 20);
});
