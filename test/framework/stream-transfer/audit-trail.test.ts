import test from 'ava';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { verifyTrail } from '@baton/consensus/internal/audit-chain.js';
import { STREAM_AUDIT_TRAIL } from '@baton/stream-transfer/internal/audit-trail.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { AppliedLog } from './metadata-fixture.js';

/** The records the state still holds pending, oldest first (no projection runs here). */
function trail(state: StreamMetadata): AuditRecord[] {
  return [...state.auditPendingRecords()]
    .map((p) => p.record)
    .sort((a, b) => a.commit_index - b.commit_index || (a.seq ?? 0) - (b.seq ?? 0));
}

const ofKind = (records: AuditRecord[], kind: string) => records.filter((r) => r.kind === kind);

test('create, transfer and completion each seal one record: actor, epochs, the completion caused by its proposal', (t) => {
  const log = new AppliedLog().nodes(['a', 10], ['b', 10]);
  t.is(log.state.auditPendingCount, 0, 'registering nodes changes no owner');
  log.must({ type: 'create-stream', stream: 's', node: 'a', actor: 'olivia', at: 1_000 });
  const proposed = log.must({ type: 'transfer', stream: 's', target: 'b', actor: 'olivia', at: 2_000 });
  t.like(proposed, { sealed: 1 });
  log.settle('s');
  const records = trail(log.state);
  t.deepEqual(records.map((r) => r.kind), ['stream_created', 'transfer_proposed', 'transfer_completed']);
  const [created, proposal, completed] = records;
  t.like(created, { authority: STREAM_AUDIT_TRAIL, subject_type: 'stream', subject: 's', target: 'a', epoch_before: 0, epoch: 1, actor: 'olivia', time: 1_000 });
  t.like(proposal, { source: 'a', target: 'b', epoch_before: 1, epoch: 1, actor: 'olivia', reason: 'admin', time: 2_000 });
  t.like(completed, { source: 'a', target: 'b', epoch_before: 1, epoch: 2, actor: 'system:handoff', cause: proposal.id });
  t.is(proposal.id, `${proposal.commit_index}-0`);
  t.true(verifyTrail(records, log.state.auditChain).ok);
});

test('a duplicate or a refusal seals nothing', (t) => {
  const log = new AppliedLog().nodes(['a', 10]);
  log.must({ type: 'create-stream', stream: 's', node: 'a' });
  const sealed = log.state.auditPendingCount;
  t.like(log.apply({ type: 'create-stream', stream: 's' }), { ok: true, duplicate: true });
  t.like(log.apply({ type: 'transfer', stream: 's', target: 'nowhere' }), { ok: false });
  t.like(log.apply({ type: 'undrain', node: 'a' }), { ok: true, duplicate: true });
  t.is(log.state.auditPendingCount, sealed);
});

test("a drain's record is the cause of every transfer it starts, now and as slots free up later", (t) => {
  const log = new AppliedLog().nodes(['a', 10], ['b', 10]);
  for (const s of ['s1', 's2', 's3']) log.must({ type: 'create-stream', stream: s, node: 'a' });
  log.must({ type: 'drain', node: 'a', maxInFlight: 2, actor: 'olivia' });
  log.settle('s1');
  log.settle('s2');
  log.settle('s3');
  const records = trail(log.state);
  const [drain] = ofKind(records, 'node_drain');
  t.like(drain, { subject_type: 'node', subject: 'a', actor: 'olivia' });
  const moves = ofKind(records, 'transfer_proposed');
  t.is(moves.length, 3, 'two at once, the third once one settled');
  for (const move of moves) t.like(move, { actor: 'system:drain', cause: drain.id, reason: 'drain', source: 'a', target: 'b' });
  for (const done of ofKind(records, 'transfer_completed')) t.is(done.cause, drain.id);
  log.must({ type: 'undrain', node: 'a', actor: 'olivia' });
  t.like(ofKind(trail(log.state), 'node_undrain')[0], { cause: drain.id, actor: 'olivia' });
  t.true(verifyTrail(trail(log.state), log.state.auditChain).ok);
});

test('a rebalance seals its plan and one record per move, each naming the plan', (t) => {
  const log = new AppliedLog().nodes(['a', 10]);
  for (let i = 0; i < 4; i++) log.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  log.nodes(['b', 10]);
  log.must({ type: 'rebalance', actor: 'olivia' });
  const records = trail(log.state);
  const [plan] = ofKind(records, 'rebalance_planned');
  t.like(plan, { subject_type: 'cluster', subject: 'cluster', actor: 'olivia' });
  const moves = ofKind(records, 'transfer_proposed');
  t.is(moves.length, 2);
  for (const move of moves) t.like(move, { cause: plan.id, actor: 'system:rebalance', commit_index: plan.commit_index });
  t.deepEqual(moves.map((m) => m.seq), [1, 2], 'one entry, several records: told apart by seq');
});

test("a liveness verdict and a failover seal their evidence; the streams moved and the transfers cancelled name the failover", (t) => {
  const log = new AppliedLog().nodes(['a', 10], ['b', 10], ['c', 10]);
  log.must({ type: 'create-stream', stream: 's1', node: 'a' });
  log.must({ type: 'create-stream', stream: 's2', node: 'b' });
  log.must({ type: 'transfer', stream: 's2', target: 'a' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead', evidence: 'a silent for 9000 ms' });
  const verdicts = ofKind(trail(log.state), 'node_liveness');
  t.like(verdicts[0], { subject: 'a', reason: 'Alive -> Dead', actor: 'system:liveness', evidence: 'a silent for 9000 ms' });
  t.like(ofKind(trail(log.state), 'transfer_cancelled')[0], { subject: 's2', cause: verdicts[0].id, source: 'b', target: 'a' });
  log.must({ type: 'failover', node: 'a', evidence: 'lease last renewed 9000 ms ago' });
  const [failover] = ofKind(trail(log.state), 'node_failover');
  t.like(failover, { subject: 'a', actor: 'system:liveness', evidence: 'lease last renewed 9000 ms ago' });
  const [moved] = ofKind(trail(log.state), 'stream_failed_over');
  t.like(moved, { subject: 's1', source: 'a', epoch_before: 1, epoch: 2, cause: failover.id });
  t.like(log.apply({ type: 'failover', node: 'a', actor: 'olivia' }), { duplicate: true });
  t.is(ofKind(trail(log.state), 'node_failover').length, 1, 'a failover with nothing left to move seals nothing');
});

test('acknowledgements release a record once every voter stored it; snapshots carry the pending records and the chain', (t) => {
  const log = new AppliedLog().nodes(['a', 10]);
  log.must({ type: 'create-stream', stream: 's', node: 'a' });
  const [record] = trail(log.state);
  const restored = log.machine.restore(JSON.parse(JSON.stringify(log.machine.snapshot(log.state))));
  t.deepEqual(trail(restored), [record]);
  t.deepEqual(restored.auditChain, log.state.auditChain);
  t.like(log.apply({ type: 'ack-audit', ids: [record.id, 'unknown-1'], member: 'm1' }), { ok: true, released: [record.id], unknown: ['unknown-1'] });
  t.is(log.state.auditPendingCount, 0);
  t.is(log.state.auditChain.head?.hash, record.hash, 'the chain head stays when the record leaves');
});

test("the new owner's fence of a taken-over stream is sealed once, naming the lost owner and the failover", (t) => {
  const log = new AppliedLog().nodes(['a', 10], ['b', 10]);
  log.must({ type: 'create-stream', stream: 's', node: 'a' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  log.must({ type: 'failover', node: 'a' });
  const [failover] = ofKind(trail(log.state), 'node_failover');
  t.like(log.apply({ type: 'fenced', stream: 's', node: 'a', epoch: 2, tail: 0 }), { ok: false, reason: 'not_owner' });
  t.like(log.must({ type: 'fenced', stream: 's', node: 'b', epoch: 2, tail: 7, at: 5 }), { sealed: 1 });
  t.like(ofKind(trail(log.state), 'zombie_fenced')[0], {
    subject: 's', source: 'a', target: 'b', epoch_before: 1, epoch: 2, actor: 'system:takeover', cause: failover.id, time: 5,
  });
  t.like(log.apply({ type: 'fenced', stream: 's', node: 'b', epoch: 2, tail: 7 }), { ok: true, duplicate: true });
  t.is(ofKind(trail(log.state), 'zombie_fenced').length, 1);
  t.true(verifyTrail(trail(log.state), log.state.auditChain).ok);
});
