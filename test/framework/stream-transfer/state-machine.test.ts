import test from 'ava';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { AppliedLog } from './metadata-fixture.js';

test('register-node records slots and address; the same registration again is a no-op', (t) => {
  const log = new AppliedLog();
  const registered = log.apply({ type: 'register-node', node: 'a', address: 'http://a', slots: 2 });
  t.like(registered, { ok: true, node: 'a', progress: { id: 'a', slots: 2, owned: 0, draining: false } });
  t.false('duplicate' in registered);
  t.like(log.apply({ type: 'register-node', node: 'a', address: 'http://a', slots: 2 }), { ok: true, duplicate: true, progress: { id: 'a' } });
  t.like(log.apply({ type: 'register-node', node: 'a', address: 'http://a2', slots: 3 }), { ok: true });
  t.like(log.state.node('a')!, { address: 'http://a2', slots: 3, draining: false });
});

test('create-stream places on the least loaded node and opens epoch 1 at offset 0', (t) => {
  const log = new AppliedLog().nodes(['a', 2], ['b', 2]);
  t.like(log.apply({ type: 'create-stream', stream: 's1' }), { ok: true, node: 'a', epoch: 1 });
  t.like(log.apply({ type: 'create-stream', stream: 's2' }), { ok: true, node: 'b' });
  t.deepEqual(log.state.stream('s1')!, { id: 's1', owner: 'a', epoch: 1, state: 'open', tail: 0, producers: {} });
});

test('create-stream: retry is a no-op, conflicting placement, unknown node and full cluster are rejected', (t) => {
  const log = new AppliedLog().nodes(['a', 1], ['b', 1]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  t.like(log.apply({ type: 'create-stream', stream: 's1', node: 'a' }), { ok: true, duplicate: true, node: 'a' });
  t.like(log.apply({ type: 'create-stream', stream: 's1', node: 'b' }), { ok: false, reason: 'stream_exists' });
  t.like(log.apply({ type: 'create-stream', stream: 's2', node: 'zz' }), { ok: false, reason: 'unknown_node' });
  t.like(log.apply({ type: 'create-stream', stream: 's2', node: 'a' }), { ok: false, reason: 'no_free_slots' });
  log.must({ type: 'create-stream', stream: 's2' });
  t.like(log.apply({ type: 'create-stream', stream: 's3' }), { ok: false, reason: 'no_free_slots' });
});

test('malformed commands are rejected as results, never thrown', (t) => {
  const log = new AppliedLog();
  t.like(log.apply({ type: 'nonsense' } as never), { ok: false, reason: 'invalid_command' });
  t.like(log.apply({ type: 'create-stream', stream: '../etc' } as never), { ok: false, reason: 'invalid_command' });
  t.like(log.apply(null as never), { ok: false, reason: 'invalid_command' });
});

test('ids that name Object.prototype members are ordinary ids', (t) => {
  const log = new AppliedLog().nodes(['a', 2]);
  t.like(log.apply({ type: 'transfer', stream: 'constructor', target: 'a' }), { ok: false, reason: 'unknown_stream' });
  t.like(log.apply({ type: 'create-stream', stream: 'toString' }), { ok: true, node: 'a' });
  t.like(log.apply({ type: 'transfer', stream: 'toString', target: 'hasOwnProperty' }), { ok: false, reason: 'unknown_node' });
});

test('transfer validates: stream exists, target registered, not draining, with a free slot', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 1], ['c', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'create-stream', stream: 's2', node: 'a' });
  log.must({ type: 'create-stream', stream: 's3', node: 'b' });
  t.like(log.apply({ type: 'transfer', stream: 'nope', target: 'b' }), { ok: false, reason: 'unknown_stream' });
  t.like(log.apply({ type: 'transfer', stream: 's1', target: 'ghost' }), { ok: false, reason: 'unknown_node' });
  t.like(log.apply({ type: 'transfer', stream: 's1', target: 'b' }), { ok: false, reason: 'no_free_slots' });
  log.must({ type: 'drain', node: 'c' });
  t.like(log.apply({ type: 'transfer', stream: 's1', target: 'c' }), { ok: false, reason: 'node_draining' });
  t.is(log.state.transferCount, 0);
});

test('transfer records the pending pair keyed by stream; the same proposal twice is a no-op', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  t.like(log.apply({ type: 'transfer', stream: 's1', target: 'b' }), { ok: true, node: 'b', epoch: 1 });
  const pending = structuredClone(log.state.transfer('s1'));
  t.like(pending, { stream: 's1', source: 'a', target: 'b', epoch: 1, reason: 'admin' });
  // The duplicate names the pending record it found, which is what the admin API answers from.
  t.deepEqual(log.apply({ type: 'transfer', stream: 's1', target: 'b' }), { ok: true, duplicate: true, node: 'b', transfer: pending });
  t.deepEqual(log.state.transfer('s1'), pending);
});

test('a conflicting transfer of a stream already transferring is rejected', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5], ['c', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  t.like(log.apply({ type: 'transfer', stream: 's1', target: 'c' }), { ok: false, reason: 'already_transferring' });
  t.is(log.state.transfer('s1')!.target, 'b');
});

test('a pending incoming transfer takes a slot of the target', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 1]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'create-stream', stream: 's2', node: 'a' });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  t.like(log.apply({ type: 'transfer', stream: 's2', target: 'b' }), { ok: false, reason: 'no_free_slots' });
});

test('close records the epoch, tail and producer marks; repeating it is a no-op, a different tail is rejected', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  const producers = { p1: { seq: 4, first: 7, count: 3 } };
  t.like(log.apply({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 10, producers }), { ok: true, epoch: 1 });
  t.like(log.state.stream('s1')!, { state: 'closed', epoch: 1, tail: 10, producers });
  t.like(log.apply({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 10, producers }), { ok: true, duplicate: true });
  t.like(log.apply({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 11, producers }), { ok: false, reason: 'tail_mismatch' });
});

test('close is refused from a non-owner, at another epoch, or with a tail below the recorded one', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  t.like(log.apply({ type: 'close', stream: 's1', node: 'b', epoch: 1, tail: 0, producers: {} }), { ok: false, reason: 'not_owner' });
  t.like(log.apply({ type: 'close', stream: 's1', node: 'a', epoch: 2, tail: 0, producers: {} }), { ok: false, reason: 'stale_epoch' });
  t.like(log.apply({ type: 'close', stream: 'zz', node: 'a', epoch: 1, tail: 0, producers: {} }), { ok: false, reason: 'unknown_stream' });
  log.must({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 5, producers: {} });
  log.must({ type: 'reopen', stream: 's1', node: 'a', epoch: 1 });
  t.like(log.apply({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 5, producers: {} }), { ok: false, reason: 'stale_epoch' });
  t.like(log.apply({ type: 'close', stream: 's1', node: 'a', epoch: 2, tail: 4, producers: {} }), { ok: false, reason: 'tail_mismatch' });
  t.is(log.state.stream('s1')!.state, 'open');
});

test('completion is accepted only when the stream is closed at exactly that epoch', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  const complete = { type: 'complete', stream: 's1', source: 'a', target: 'b', epoch: 1 } as const;
  t.like(log.apply(complete), { ok: false, reason: 'not_closed_at_epoch' });
  t.like(log.apply({ ...complete, epoch: 2 }), { ok: false, reason: 'not_closed_at_epoch' });
  t.truthy(log.state.transfer('s1'), 'a refused completion leaves the pending record');
  log.must({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 3, producers: {} });
  t.like(log.apply({ ...complete, source: 'b', target: 'a' }), { ok: false, reason: 'transfer_mismatch' });
  t.like(log.apply(complete), { ok: true, node: 'b', epoch: 2 });
});

test('completion re-points the stream at the target, opens the next epoch and removes the pending record at once', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  log.must({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 3, producers: { p: { seq: 1, first: 0, count: 3 } } });
  log.must({ type: 'complete', stream: 's1', source: 'a', target: 'b', epoch: 1 });
  t.deepEqual(log.state.stream('s1')!, {
    id: 's1',
    owner: 'b',
    epoch: 2,
    state: 'open',
    tail: 3,
    producers: { p: { seq: 1, first: 0, count: 3 } },
  });
  t.is(log.state.transferCount, 0);
});

test('a duplicate completion is harmless and a stale one cannot undo later state', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  log.settle('s1');
  const complete = { type: 'complete', stream: 's1', source: 'a', target: 'b', epoch: 1 } as const;
  t.deepEqual(log.apply(complete), { ok: true, duplicate: true, epoch: 2 });
  // The stream moves back to a at epoch 3; the old completion must now be rejected.
  log.must({ type: 'transfer', stream: 's1', target: 'a' });
  log.settle('s1');
  const before = structuredClone(log.state.toSnapshot());
  t.like(log.apply(complete), { ok: false, reason: 'stale_epoch' });
  t.like(log.apply({ type: 'complete', stream: 's1', source: 'b', target: 'a', epoch: 2 }), { ok: true, duplicate: true });
  t.deepEqual(log.state.toSnapshot(), before);
  t.like(log.state.stream('s1')!, { owner: 'a', epoch: 3 });
});

test('a stale completion cannot complete a later transfer of the same pair', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 0, producers: {} });
  log.must({ type: 'reopen', stream: 's1', node: 'a', epoch: 1 });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  log.must({ type: 'close', stream: 's1', node: 'a', epoch: 2, tail: 0, producers: {} });
  t.like(log.apply({ type: 'complete', stream: 's1', source: 'a', target: 'b', epoch: 1 }), { ok: false, reason: 'stale_epoch' });
  t.truthy(log.state.transfer('s1'));
  t.like(log.apply({ type: 'complete', stream: 's1', source: 'a', target: 'b', epoch: 2 }), { ok: true, epoch: 3 });
});

test('reopen moves a closed stream with no transfer to the next epoch; only its owner may', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  t.like(log.apply({ type: 'reopen', stream: 's1', node: 'a', epoch: 1 }), { ok: false, reason: 'not_closed_at_epoch' });
  log.must({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 2, producers: {} });
  t.like(log.apply({ type: 'reopen', stream: 's1', node: 'b', epoch: 1 }), { ok: false, reason: 'not_owner' });
  t.like(log.apply({ type: 'reopen', stream: 's1', node: 'a', epoch: 1 }), { ok: true, epoch: 2 });
  t.like(log.apply({ type: 'reopen', stream: 's1', node: 'a', epoch: 1 }), { ok: true, duplicate: true, epoch: 2 });
  t.like(log.state.stream('s1')!, { state: 'open', epoch: 2, tail: 2 });
});

test('reopen is refused while a transfer is pending: the target opens the stream', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  log.must({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 0, producers: {} });
  t.like(log.apply({ type: 'reopen', stream: 's1', node: 'a', epoch: 1 }), { ok: false, reason: 'transfer_pending' });
});

test('drain marks the node draining and starts balanced transfers, bounded in flight, until it owns nothing', (t) => {
  const log = new AppliedLog().nodes(['a', 100], ['b', 100], ['c', 100]);
  for (let i = 0; i < 10; i++) log.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  log.must({ type: 'drain', node: 'a', maxInFlight: 3 });
  t.true(log.state.node('a')!.draining);
  t.is(log.state.transferCount, 3);
  const targets = new Map<string, number>();
  let guard = 0;
  while (log.state.transferCount > 0 && guard++ < 100) {
    t.true(log.state.transferCount <= 3, 'never more than the bound in flight');
    const stream = [...log.state.transfers()].map((p) => p.stream).sort()[0];
    const target = log.state.transfer(stream)!.target;
    targets.set(target, (targets.get(target) ?? 0) + 1);
    log.settle(stream);
  }
  t.false([...log.state.streams()].some((s) => s.owner === 'a'));
  t.deepEqual([...targets.values()].sort(), [5, 5], 'streams spread evenly over b and c');
});

test('a draining node takes no new placements; drain of an unknown node is rejected; undrain restores it', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'drain', node: 'a' });
  t.like(log.apply({ type: 'drain', node: 'a' }), { ok: true, duplicate: true });
  t.like(log.apply({ type: 'create-stream', stream: 's1' }), { ok: true, node: 'b' });
  t.like(log.apply({ type: 'create-stream', stream: 's2', node: 'a' }), { ok: false, reason: 'node_draining' });
  t.like(log.apply({ type: 'drain', node: 'zz' }), { ok: false, reason: 'unknown_node' });
  log.must({ type: 'undrain', node: 'a' });
  t.like(log.apply({ type: 'create-stream', stream: 's2', node: 'a' }), { ok: true, node: 'a' });
});

test('a drain with no free target waits, and resumes when a node registers', (t) => {
  const log = new AppliedLog().nodes(['a', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'drain', node: 'a' });
  t.is(log.state.transferCount, 0);
  log.must({ type: 'register-node', node: 'b', address: 'http://b', slots: 1 });
  t.like(log.state.transfer('s1'), { source: 'a', target: 'b', reason: 'drain' });
});

test('rebalance plans moves that even out streams per node and runs them bounded in flight', (t) => {
  const log = new AppliedLog().nodes(['a', 100], ['b', 100], ['c', 100]);
  for (let i = 0; i < 9; i++) log.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  const result = log.apply({ type: 'rebalance', maxInFlight: 2 });
  t.true(result.ok);
  t.is(result.ok && result.rebalance?.plan.planned, 6);
  let guard = 0;
  while (log.state.transferCount > 0 && guard++ < 100) {
    t.true(log.state.transferCount <= 2);
    log.settle([...log.state.transfers()].map((p) => p.stream).sort()[0]);
  }
  const perNode = { a: 0, b: 0, c: 0 } as Record<string, number>;
  for (const s of [...log.state.streams()]) perNode[s.owner] += 1;
  t.deepEqual(perNode, { a: 3, b: 3, c: 3 });
  t.like(log.state.rebalance, { planned: 6, started: 6, skipped: 0 });
});

test('a planned move that became invalid is skipped, not forced', (t) => {
  const log = new AppliedLog().nodes(['a', 100], ['b', 100]);
  for (let i = 0; i < 4; i++) log.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  log.must({ type: 'rebalance', maxInFlight: 1 });
  const [first] = [...log.state.transfers()].map((p) => p.stream);
  log.must({ type: 'drain', node: 'b', maxInFlight: 1 });
  log.settle(first);
  t.like(log.state.rebalance, { skipped: 1 });
});

test('snapshot and restore round-trip the metadata', (t) => {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'transfer', stream: 's1', target: 'b' });
  const copy = log.machine.restore(JSON.parse(JSON.stringify(log.machine.snapshot(log.state))));
  t.deepEqual(copy.toSnapshot(), log.state.toSnapshot());
  t.like(copy.transfer('s1'), { source: 'a', target: 'b' });
  t.is(copy.incomingCount('b'), 1);
  t.throws(() => log.machine.restore({ nodes: {} }), { message: /malformed/ });
  t.throws(() => log.machine.restore({ format: 2, nodes: {} }), { message: /malformed/ });
});

test('a snapshot in the earlier keyed-object form still restores, indexes included', (t) => {
  const legacy = {
    nodes: {
      a: { id: 'a', address: 'http://a', slots: 5, draining: false, drainInFlight: 32 },
      b: { id: 'b', address: 'http://b', slots: 5, draining: false, drainInFlight: 32 },
    },
    streams: { s1: { id: 's1', owner: 'a', epoch: 1, state: 'open', tail: 0, producers: {} } },
    transfers: { s1: { stream: 's1', source: 'a', target: 'b', epoch: 1, reason: 'admin', since: 4 } },
  };
  const state = new StreamStateMachine().restore(legacy);
  t.like(state.stream('s1'), { owner: 'a' });
  t.is(state.load('b'), 1, 'the pending transfer counts against the target');
  t.is(state.outgoingCount('a'), 1);
});
