import test from 'ava';
import { AppliedLog } from './metadata-fixture.js';

function threeNodes(): AppliedLog {
  const log = new AppliedLog().nodes(['a', 10], ['b', 10], ['c', 10]);
  for (const s of ['s1', 's2', 's3']) log.must({ type: 'create-stream', stream: s, node: 'a' });
  return log;
}

test('node-liveness records what the leader saw; the same state again is a no-op; an unknown node is rejected', (t) => {
  const log = threeNodes();
  t.like(log.apply({ type: 'node-liveness', node: 'a', liveness: 'Suspect' }), { ok: true, node: 'a' });
  t.is(log.state.node('a')!.liveness, 'Suspect');
  t.like(log.apply({ type: 'node-liveness', node: 'a', liveness: 'Suspect' }), { ok: true, duplicate: true });
  t.like(log.apply({ type: 'node-liveness', node: 'zz', liveness: 'Dead' }), { ok: false, reason: 'unknown_node' });
  t.like(log.apply({ type: 'node-liveness', node: 'a', liveness: 'Gone' } as never), { ok: false, reason: 'invalid_command' });
});

test('failover of a node that is not Dead is refused unless forced', (t) => {
  const log = threeNodes();
  t.like(log.apply({ type: 'failover', node: 'a' }), { ok: false, reason: 'node_not_dead' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Suspect' });
  t.like(log.apply({ type: 'failover', node: 'a' }), { ok: false, reason: 'node_not_dead' });
  t.like(log.apply({ type: 'failover', node: 'zz', force: true }), { ok: false, reason: 'unknown_node' });
  t.like(log.apply({ type: 'failover', node: 'a', force: true }), { ok: true, moved: 3, remaining: 0 });
  t.is([...log.state.streams()].filter((s) => s.owner === 'a').length, 0);
});

test('failover moves every stream of a Dead node to live nodes at the next epoch, marked as a takeover', (t) => {
  const log = threeNodes();
  log.must({ type: 'close', stream: 's2', node: 'a', epoch: 1, tail: 7, producers: { p: { seq: 4, first: 6, count: 1 } } });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  t.like(log.apply({ type: 'failover', node: 'a' }), { ok: true, node: 'a', moved: 3, remaining: 0 });
  for (const id of ['s1', 's2', 's3']) {
    const stream = log.state.stream(id)!;
    t.not(stream.owner, 'a');
    t.like(stream, { epoch: 2, state: 'open', takeover: { from: 'a', epoch: 1 } });
  }
  t.like(log.state.stream('s2')!, { tail: 7, producers: { p: { seq: 4 } } }, 'where the old epoch is known to begin');
  const owners = [...log.state.streams()].map((s) => s.owner);
  t.true(owners.includes('b') && owners.includes('c'), 'spread over the live nodes');
  t.like(log.apply({ type: 'failover', node: 'a' }), { ok: true, duplicate: true, moved: 0 }, 'repeating it is a no-op');
});

test('a pending transfer from the dead node goes to its own target; transfers to it are cancelled', (t) => {
  const log = threeNodes();
  log.must({ type: 'create-stream', stream: 'onB', node: 'b' });
  log.must({ type: 'transfer', stream: 's1', target: 'c' });
  log.must({ type: 'transfer', stream: 'onB', target: 'a' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  t.false(log.state.transfer('onB') !== undefined, 'a transfer to a Dead node is cancelled when it turns Dead');
  t.like(log.state.stream('onB')!, { owner: 'b', epoch: 1 });
  t.like(log.state.transfer('s1')!, { source: 'a', target: 'c' }, 'still pending until the failover');
  log.must({ type: 'failover', node: 'a' });
  t.deepEqual([...log.state.transfers()].map((tr) => tr.stream), []);
  t.like(log.state.stream('s1')!, { owner: 'c', epoch: 2, takeover: { from: 'a', epoch: 1 } });
});

test('a Dead node takes no placements, transfers or rebalance moves', (t) => {
  const log = threeNodes();
  log.must({ type: 'node-liveness', node: 'c', liveness: 'Dead' });
  t.like(log.apply({ type: 'create-stream', stream: 'x', node: 'c' }), { ok: false, reason: 'node_dead' });
  t.like(log.apply({ type: 'transfer', stream: 's1', target: 'c' }), { ok: false, reason: 'node_dead' });
  for (let i = 0; i < 5; i++) t.like(log.apply({ type: 'create-stream', stream: `y${i}` }), { ok: true });
  t.false([...log.state.streams()].some((s) => s.owner === 'c'));
  const rebalance = log.apply({ type: 'rebalance' });
  // byNode covers the whole plan, not only the moves shown.
  t.true(rebalance.ok && rebalance.rebalance !== undefined && !rebalance.rebalance.plan.byNode.some((effect) => effect.node === 'c' && effect.in > 0));
  log.must({ type: 'drain', node: 'a' });
  t.false([...log.state.transfers()].some((tr) => tr.target === 'c'), 'a drain sends nothing to a Dead node');
});

test('failover leaves what finds no free slot, and finishes when capacity appears', (t) => {
  const log = new AppliedLog().nodes(['a', 10], ['b', 1]);
  for (const s of ['s1', 's2', 's3']) log.must({ type: 'create-stream', stream: s, node: 'a' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  t.like(log.apply({ type: 'failover', node: 'a' }), { ok: true, moved: 1, remaining: 2 });
  log.must({ type: 'register-node', node: 'c', address: 'http://c', slots: 5 });
  t.like(log.apply({ type: 'failover', node: 'a' }), { ok: true, moved: 2, remaining: 0 });
});

test('the next close of a taken-over stream makes its tail exact and ends the takeover', (t) => {
  const log = threeNodes();
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  log.must({ type: 'failover', node: 'a' });
  const s1 = log.state.stream('s1')!;
  log.must({ type: 'close', stream: 's1', node: s1.owner, epoch: 2, tail: 12, producers: {} });
  t.like(log.state.stream('s1')!, { state: 'closed', tail: 12, epoch: 2 });
  t.is(log.state.stream('s1')!.takeover, undefined);
  t.like(log.apply({ type: 'close', stream: 's1', node: 'a', epoch: 1, tail: 3, producers: {} }), { ok: false, reason: 'stale_epoch' }, 'the old owner cannot close what it lost');
});

test('a node that returns is published Alive again and takes placements', (t) => {
  const log = threeNodes();
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  log.must({ type: 'failover', node: 'a' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Alive' });
  t.like(log.apply({ type: 'create-stream', stream: 'back', node: 'a' }), { ok: true, node: 'a' });
});
