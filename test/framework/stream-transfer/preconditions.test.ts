import test from 'ava';
import { AppliedLog } from './metadata-fixture.js';

// The operator's preconditions are decided by apply, in log order: the second of two racing
// commands meets the state the first one left, whatever either proposer had read.

test('a transfer expecting the current epoch and owner starts; one expecting another epoch or owner changes nothing', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5], ['c', 5]);
  log.must({ type: 'create-stream', stream: 's', node: 'a' });
  const staleEpoch = log.apply({ type: 'transfer', stream: 's', target: 'b', expectedEpoch: 2 });
  t.like(staleEpoch, { ok: false, reason: 'precondition_failed', current: { stream: 's', owner: 'a', epoch: 1 } });
  const otherOwner = log.apply({ type: 'transfer', stream: 's', target: 'b', expectedOwner: 'c', expectedEpoch: 1 });
  t.like(otherOwner, { ok: false, reason: 'precondition_failed', current: { owner: 'a', epoch: 1 } });
  t.is(log.state.transferCount, 0);
  t.like(log.apply({ type: 'transfer', stream: 's', target: 'b', expectedOwner: 'a', expectedEpoch: 1 }), { ok: true, transfer: { source: 'a', target: 'b', epoch: 1 } });
});

test('two operators racing to move one stream from epoch 1: the first moves it, the second finds epoch 2 and is refused', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5], ['c', 5]);
  log.must({ type: 'create-stream', stream: 's', node: 'a' });
  // Both read epoch 1 on a; the first command lands and its handoff completes before the second applies.
  log.must({ type: 'transfer', stream: 's', target: 'b', expectedEpoch: 1 });
  log.settle('s');
  const second = log.apply({ type: 'transfer', stream: 's', target: 'c', expectedEpoch: 1, expectedOwner: 'a' });
  t.like(second, { ok: false, reason: 'precondition_failed', current: { owner: 'b', epoch: 2 } });
  t.like(log.state.stream('s'), { owner: 'b', epoch: 2 });
  t.is(log.state.transfer('s'), undefined);
});

test('a precondition on an unknown stream is still a 404 reason, not a failed precondition', (t) => {
  const log = new AppliedLog().nodes(['a', 5]);
  t.like(log.apply({ type: 'transfer', stream: 'ghost', target: 'a', expectedEpoch: 1 }), { ok: false, reason: 'unknown_stream' });
});

test('a drain expecting the node\'s current stream count drains it; a stale count leaves it serving', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'create-stream', stream: 's2', node: 'a' });
  const stale = log.apply({ type: 'drain', node: 'a', expectedStreams: 1 });
  t.like(stale, { ok: false, reason: 'precondition_failed', current: { node: 'a', streams: 2 } });
  t.false(log.state.node('a')!.draining);
  t.is(log.state.transferCount, 0);
  t.like(log.apply({ type: 'drain', node: 'a', expectedStreams: 2 }), { ok: true });
  t.true(log.state.node('a')!.draining);
});

test('a failover expecting a stale stream count moves nothing; the current count fails the node over', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  const stale = log.apply({ type: 'failover', node: 'a', expectedStreams: 0 });
  t.like(stale, { ok: false, reason: 'precondition_failed', current: { node: 'a', streams: 1 } });
  t.is(log.state.stream('s1')!.owner, 'a');
  t.like(log.apply({ type: 'failover', node: 'a', expectedStreams: 1 }), { ok: true, moved: 1 });
  t.like(log.state.stream('s1'), { owner: 'b', epoch: 2 });
});
