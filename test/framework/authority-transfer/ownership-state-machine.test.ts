import test from 'ava';
import { ABANDONED_PER_AUTHORITY, ABANDONED_TOTAL, type OwnershipState, type RegisterTransferCommand } from '@baton/authority-transfer/internal/ownership.js';
import { abandonedKey, latestAbandoned, snapshotOwnership } from '@baton/authority-transfer/internal/ownership-index.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { auditRecordHash, verifyTrail } from '@baton/consensus';
import type { AuditRecord } from '@baton/contracts';
import { applyContext, commit, registration } from './ownership-commands.js';

const machine = new OwnershipStateMachine();
const ctx = applyContext;

function establish(state: OwnershipState, authority = 'proj', home = 'east'): void {
  machine.apply(state, { type: 'transfer_authority', authority, target: home }, ctx(1));
}

function established(): OwnershipState {
  const state = machine.initial();
  establish(state);
  return state;
}

/** Registers, freezes and records the source's final serial: what a commit needs. */
function readyToCommit(state: OwnershipState, overrides: Partial<RegisterTransferCommand> = {}, final = 4821): void {
  const r = registration(overrides);
  machine.apply(state, r, ctx(2));
  machine.apply(state, { type: 'freeze_transfer', id: r.id, authority: r.authority, thawBy: 2_000 }, ctx(3));
  for (const s of r.sources) {
    machine.apply(state, { type: 'record_final', id: r.id, authority: r.authority, member: s.member, incarnation: s.incarnation, serial: final, freeze: 1 }, ctx(4));
  }
}

/** `record` with the links a chain after `previous` gives it (prev_hash, then its own hash). */
function linked(record: Omit<AuditRecord, 'prev_hash' | 'hash'>, previous = ''): AuditRecord {
  const withPrevious = { ...record, prev_hash: previous } as AuditRecord;
  return { ...withPrevious, hash: auditRecordHash(withPrevious) };
}

test('the raw transfer_authority command establishes an unknown authority at epoch 1 and seals the first record of its trail', (t) => {
  const state = machine.initial();
  const result = machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east', actor: 'olivia', reason: 'new project', observed: { at: 1_700 } }, ctx(1));
  const record = linked({
    id: '1-0',
    authority: 'proj',
    source: '',
    target: 'east',
    actor: 'olivia',
    reason: 'new project',
    barrier: 0,
    epoch: 1,
    commit_term: 3,
    commit_index: 1,
    kind: 'authority_established',
    subject_type: 'authority',
    subject: 'proj',
    epoch_before: 0,
    time: 1_700,
  });
  t.deepEqual(result, { ok: true, authority: 'proj', source: undefined, home: 'east', epoch: 1, record });
  t.deepEqual(state.authorities.get('proj'), { home: 'east', epoch: 1 });
  t.deepEqual(state.pending.get('1-0'), { record, awaiting: ['a', 'b', 'c'] }, 'pending until every voter at commit stored it');
  t.deepEqual(state.chains.get('proj')!.head, { records: 1, hash: record.hash, commit_index: 1, seq: 0 });
});

test('the raw command moves unconditionally, mints the next epoch and seals a raw_transfer chained after the establish', (t) => {
  const state = established();
  const first = state.pending.get('1-0')!.record;
  const result = machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'west' }, ctx(2));
  const record = linked(
    {
      id: '2-0',
      authority: 'proj',
      source: 'east',
      target: 'west',
      actor: 'system:transfer_authority',
      reason: '',
      barrier: 0,
      epoch: 2,
      commit_term: 3,
      commit_index: 2,
      kind: 'raw_transfer',
      subject_type: 'authority',
      subject: 'proj',
      epoch_before: 1,
    },
    first.hash,
  );
  t.deepEqual(result, { ok: true, authority: 'proj', source: 'east', home: 'west', epoch: 2, record });
  t.like(verifyTrail([first, record], state.chains.get('proj')), { ok: true, checked: 2, behind: false });
});

test('a failover seals failover_transfer with its loss report as evidence, bounded whatever the proposer sent', (t) => {
  const state = established();
  const loss = {
    lost: Array.from({ length: 150 }, (_, i) => ({ member: 'east-1', serial: 10 + i })),
    lost_count: 150,
    feeds: [{ member: 'east-1', incarnation: 'i1', pulled: 159, applied: 9 }],
    unknown: [{ member: 'east-2', why: 'x'.repeat(1_000) }],
    read_by: 'west-1',
    extra: 'dropped',
  };
  const result = machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'west', expectedSource: 'east', failover: true, actor: 'olivia', observed: { at: 5, loss } }, ctx(2));
  t.like(result, { ok: true, record: { id: '2-0', kind: 'failover_transfer', source: 'east', target: 'west', epoch_before: 1, epoch: 2, actor: 'olivia', time: 5 } });
  const evidence = JSON.parse((result as { record: AuditRecord }).record.evidence!);
  t.is(evidence.lost.length, 100, 'the list is bounded');
  t.is(evidence.lost_count, 150, 'the count is not');
  t.deepEqual(evidence.lost[0], { member: 'east-1', serial: 10 });
  t.is(evidence.unknown[0].why.length, 256);
  t.false('extra' in evidence);
  t.is(evidence.read_by, 'west-1');
});

test('a raw move that is refused seals nothing', (t) => {
  const state = established();
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(2));
  t.deepEqual([...state.pending.keys()], ['1-0']);
  t.is(state.chains.get('proj')!.head!.records, 1);
});

test('the raw command with expectedSource refuses when the home changed', (t) => {
  const state = established();
  const result = machine.apply(
    state,
    { type: 'transfer_authority', authority: 'proj', target: 'west', expectedSource: 'north' },
    ctx(2),
  );
  t.deepEqual(result, { ok: false, reason: 'source_not_home', home: 'east', epoch: 1 });
  t.deepEqual(state.authorities.get('proj'), { home: 'east', epoch: 1 });
});

test('a move to the current home is refused and mints no epoch', (t) => {
  const state = established();
  const result = machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(2));
  t.like(result, { ok: false, reason: 'already_home' });
  t.is(state.authorities.get('proj')!.epoch, 1);
});

test('a planned commit seals the registered request with the post-mutation epoch, the deciding position and the final serial as barrier', (t) => {
  const state = established();
  readyToCommit(state);
  const result = machine.apply(state, { ...commit({ barrier: 1 }), observed: { at: 77 } }, ctx(9043, ['a', 'b', 'c'], 12));
  t.deepEqual(result, {
    ok: true,
    record: linked(
      {
        id: 'k1',
        authority: 'proj',
        source: 'east',
        target: 'west',
        actor: 'olivia',
        reason: 'drain east',
        barrier: 4821,
        epoch: 2,
        commit_term: 12,
        commit_index: 9043,
        kind: 'planned_transfer',
        subject_type: 'authority',
        subject: 'proj',
        epoch_before: 1,
        time: 77,
      },
      state.pending.get('1-0')!.record.hash,
    ),
  }, "chained after the establish's record on the authority's trail");
  t.deepEqual(
    state.authorities.get('proj'),
    { home: 'west', epoch: 2, catchUp: { finals: [{ member: 'east-1', incarnation: 'i1', serial: 4821 }], settled: [] } },
    'the new home is told the final serial it must hold before it writes under epoch 2',
  );
  t.false(state.transfers.has('proj'), 'the registration leaves with the commit');
});

test('a planned commit keeps one projection acknowledgement per voter present at commit', (t) => {
  const state = established();
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5, ['a', 'b', 'c']));
  t.deepEqual(state.pending.get('k1')!.awaiting, ['a', 'b', 'c']);
});

test('a planned commit is refused unless its transfer is registered, frozen and every source final recorded', (t) => {
  const state = established();
  t.like(machine.apply(state, commit(), ctx(2)), { ok: false, reason: 'not_registered' });
  machine.apply(state, registration({ sources: [{ member: 'east-1', incarnation: 'i1', serial: 3 }, { member: 'east-2', incarnation: 'j1', serial: 7 }] }), ctx(3));
  t.like(machine.apply(state, commit(), ctx(4)), { ok: false, reason: 'not_frozen' });
  machine.apply(state, { type: 'freeze_transfer', id: 'k1', authority: 'proj', thawBy: 9 }, ctx(5));
  machine.apply(state, { type: 'record_final', id: 'k1', authority: 'proj', member: 'east-1', incarnation: 'i1', serial: 5, freeze: 1 }, ctx(6));
  t.like(machine.apply(state, commit(), ctx(7)), { ok: false, reason: 'not_frozen' }, 'east-2 has not named its final serial');
  t.like(machine.apply(state, commit({ id: 'other' }), ctx(8)), { ok: false, reason: 'not_registered' });
  machine.apply(state, { type: 'record_final', id: 'k1', authority: 'proj', member: 'east-2', incarnation: 'j1', serial: 9, freeze: 1 }, ctx(9));
  t.like(machine.apply(state, commit(), ctx(10)), { ok: true, record: { barrier: 9, epoch: 2 } });
  t.deepEqual(state.authorities.get('proj')!.catchUp?.finals, [
    { member: 'east-1', incarnation: 'i1', serial: 5 },
    { member: 'east-2', incarnation: 'j1', serial: 9 },
  ], 'one final per source member, each in its own incarnation');
  t.like(state.authorities.get('proj'), { home: 'west', epoch: 2 });
});

test('a planned commit from a datacenter that is not the home is refused and changes nothing', (t) => {
  const state = established();
  t.like(machine.apply(state, registration({ source: 'north' }), ctx(2)), { ok: false, reason: 'source_not_home', home: 'east' });
  const result = machine.apply(state, commit({ source: 'north' }), ctx(5));
  t.like(result, { ok: false, reason: 'not_registered' });
  t.deepEqual([...state.pending.keys()], ['1-0'], "only the establish's record is pending");
  t.deepEqual(state.authorities.get('proj'), { home: 'east', epoch: 1 });
});

test('a planned commit of an authority without a home is refused', (t) => {
  const state = machine.initial();
  t.like(machine.apply(state, registration(), ctx(1)), { ok: false, reason: 'unknown_authority' });
  t.like(machine.apply(state, commit(), ctx(1)), { ok: false, reason: 'unknown_authority' });
});

test('one transfer per authority: a second registration names the running one; the same key joins it; a key naming another move is refused', (t) => {
  const state = established();
  t.like(machine.apply(state, registration(), ctx(2)), { ok: true, existing: false, intent: { id: 'k1', driver: 'west-1', frozen: false } });
  t.deepEqual(machine.apply(state, registration({ id: 'k2', driver: 'north-1' }), ctx(3)), { ok: false, reason: 'transfer_in_progress', running: 'k1' });
  t.like(machine.apply(state, registration({ driver: 'north-1' }), ctx(4)), { ok: true, existing: true, intent: { driver: 'west-1' } });
  t.like(machine.apply(state, registration({ target: 'north' }), ctx(5)), { ok: false, reason: 'key_names_another_transfer' });
});

test('a registration under a key that already committed answers its sealed record', (t) => {
  const state = established();
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5));
  t.like(machine.apply(state, registration({ source: 'west', target: 'north' }), ctx(6)), { ok: false, reason: 'committed', record: { id: 'k1', epoch: 2 } });
});

test('a final serial names the freeze it was read after: one from an earlier freeze counts for nothing', (t) => {
  const state = established();
  machine.apply(state, registration(), ctx(2));
  t.like(machine.apply(state, { type: 'record_final', id: 'k1', authority: 'proj', member: 'east-1', incarnation: 'i1', serial: 5, freeze: 0 }, ctx(3)), { ok: false, reason: 'not_frozen' });
  machine.apply(state, { type: 'freeze_transfer', id: 'k1', authority: 'proj', thawBy: 9 }, ctx(4));
  machine.apply(state, { type: 'thaw_transfer', id: 'k1', authority: 'proj' }, ctx(5));
  machine.apply(state, { type: 'freeze_transfer', id: 'k1', authority: 'proj', thawBy: 9 }, ctx(6));
  t.like(machine.apply(state, { type: 'record_final', id: 'k1', authority: 'proj', member: 'east-1', incarnation: 'i1', serial: 4900, freeze: 1 }, ctx(7)), { ok: false, reason: 'not_frozen' });
  t.like(machine.apply(state, { type: 'record_final', id: 'k1', authority: 'proj', member: 'nobody', incarnation: 'i1', serial: 4900, freeze: 2 }, ctx(8)), { ok: false, reason: 'not_a_source' });
  t.like(machine.apply(state, { type: 'record_final', id: 'k1', authority: 'proj', member: 'east-1', incarnation: 'i1', serial: 4900, freeze: 2 }, ctx(9)), { ok: true, intent: { frozen: true, freezes: 2 } });
  t.is(state.transfers.get('proj')!.sources[0].final, 4900);
});

test('a thaw lifts the freeze and makes the finals the next barriers', (t) => {
  const state = established();
  readyToCommit(state, {}, 4900);
  t.like(machine.apply(state, { type: 'thaw_transfer', id: 'k1', authority: 'proj' }, ctx(5)), { ok: true, intent: { frozen: false } });
  const intent = state.transfers.get('proj')!;
  t.deepEqual(intent.sources, [{ member: 'east-1', incarnation: 'i1', barrier: 4900 }]);
  t.like(machine.apply(state, commit(), ctx(6)), { ok: false, reason: 'not_frozen' });
});

test('a release unregisters the transfer (lifting its freeze); a commit after it is refused', (t) => {
  const state = established();
  readyToCommit(state);
  t.like(machine.apply(state, { type: 'release_transfer', authority: 'proj', id: 'other', why: 'cancelled' }, ctx(5)), { ok: false, reason: 'not_registered' });
  // A driver ending its own run releases only a registration it drives.
  const driver = state.transfers.get('proj')!.driver;
  t.like(machine.apply(state, { type: 'release_transfer', authority: 'proj', id: 'k1', driver: `not-${driver}`, why: 'abandoned' }, ctx(5)), { ok: false, reason: 'not_registered' });
  t.true(state.transfers.has('proj'));
  t.like(machine.apply(state, { type: 'release_transfer', authority: 'proj', why: 'cancelled' }, ctx(6)), { ok: true, intent: { id: 'k1' } });
  t.false(state.transfers.has('proj'));
  t.like(machine.apply(state, commit(), ctx(7)), { ok: false, reason: 'not_registered' });
  t.deepEqual(state.authorities.get('proj'), { home: 'east', epoch: 1 });
  t.like(machine.apply(state, registration({ id: 'k2' }), ctx(8)), { ok: true, existing: false });
});

test('a failover move releases a registered transfer of the authority', (t) => {
  const state = established();
  readyToCommit(state);
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'north', expectedSource: 'east' }, ctx(5));
  t.false(state.transfers.has('proj'));
  t.like(machine.apply(state, commit(), ctx(6)), { ok: false, reason: 'not_registered' });
});

test('the transfers-by-source, -target and -driver indexes follow every registration and its end', (t) => {
  const state = established();
  establish(state, 'lib', 'east');
  machine.apply(state, registration(), ctx(2));
  machine.apply(state, registration({ id: 'k2', authority: 'lib', target: 'north', driver: 'east-1' }), ctx(3));
  t.deepEqual([...state.transfersBySource.get('east')!], ['proj', 'lib']);
  t.deepEqual([...state.transfersByTarget.get('north')!], ['lib']);
  t.deepEqual([...state.transfersByDriver.get('west-1')!], ['proj']);
  machine.apply(state, { type: 'release_transfer', authority: 'lib', why: 'cancelled' }, ctx(4));
  t.false(state.transfersByTarget.has('north'));
  t.false(state.transfersByDriver.has('east-1'));
  t.deepEqual([...state.transfersBySource.get('east')!], ['proj']);
});

test('a later move cannot change the epoch recorded for an earlier transfer', (t) => {
  const state = established();
  readyToCommit(state);
  const first = machine.apply(state, commit(), ctx(5));
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'north' }, ctx(6));
  t.like(first, { ok: true, record: { epoch: 2 } });
  t.is(state.pending.get('k1')!.record.epoch, 2);
  t.is(state.authorities.get('proj')!.epoch, 3);
});

test('the same transfer applied twice while pending answers its sealed record, not a second move', (t) => {
  const state = established();
  readyToCommit(state);
  const first = machine.apply(state, commit(), ctx(5));
  const again = machine.apply(state, commit({ source: 'west', target: 'east' }), ctx(6));
  t.deepEqual(again, first);
  t.like(state.authorities.get('proj'), { home: 'west', epoch: 2 });
});

/** Commits k1 (east -> west) and then k2 (west -> east) of proj. */
function twoCommits(state: OwnershipState, voters1 = ['a', 'b', 'c'], voters2 = ['a', 'b', 'c']): void {
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5, voters1));
  readyToCommit(state, { id: 'k2', source: 'west', target: 'east' });
  machine.apply(state, commit({ id: 'k2', source: 'west', target: 'east' }), ctx(6, voters2));
}

test('an ack releases one voter; the record leaves once every voter acked', (t) => {
  const state = established();
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5, ['a', 'b']));
  t.deepEqual(machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'a' }, ctx(6)), { ok: true, released: [], unknown: [] });
  t.deepEqual(state.pending.get('k1')!.awaiting, ['b']);
  t.deepEqual(machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'b' }, ctx(7)), { ok: true, released: ['k1'], unknown: [] });
  t.false(state.pending.has('k1'));
  t.deepEqual([...state.pendingByAuthority.get('proj')!], ['1-0'], "the establish's record still waits for its own acks");
  machine.apply(state, { type: 'ack_audit', ids: ['1-0'], member: 'a' }, ctx(8));
  machine.apply(state, { type: 'ack_audit', ids: ['1-0'], member: 'b' }, ctx(9));
  machine.apply(state, { type: 'ack_audit', ids: ['1-0'], member: 'c' }, ctx(10));
  t.false(state.pendingByAuthority.has('proj'));
});

test('an ack of an unknown or released record is a harmless no-op', (t) => {
  const state = established();
  const before = structuredClone(snapshotOwnership(state));
  t.deepEqual(machine.apply(state, { type: 'ack_audit', ids: ['nope'], member: 'a' }, ctx(6)), {
    ok: true,
    released: [],
    unknown: ['nope'],
  });
  t.deepEqual(snapshotOwnership(state), before);
});

test('a voter leaving the membership releases its obligations', (t) => {
  const state = established();
  twoCommits(state);
  machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'a' }, ctx(7));
  machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'b' }, ctx(8));
  machine.membershipChanged(state, ctx(9, ['a', 'b']));
  t.false(state.pending.has('k1'), 'only c was left and it left');
  t.deepEqual(state.pending.get('k2')!.awaiting, ['a', 'b']);
});

test('one ack carries a batch of records', (t) => {
  const state = established();
  twoCommits(state, ['a'], ['a', 'b']);
  const result = machine.apply(state, { type: 'ack_audit', ids: ['k1', 'k2', 'gone'], member: 'a' }, ctx(7));
  t.deepEqual(result, { ok: true, released: ['k1'], unknown: ['gone'] });
  t.deepEqual(state.pending.get('k2')!.awaiting, ['b']);
});

test('snapshots are plain JSON carrying ownership, pending records and registered transfers; restore rebuilds the indexes', (t) => {
  const state = established();
  establish(state, 'lib', 'east');
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5));
  machine.apply(state, registration({ id: 'k2', authority: 'lib', target: 'north' }), ctx(6));
  const snap = JSON.parse(JSON.stringify(machine.snapshot(state)));
  const restored = machine.restore(snap);
  t.deepEqual(restored, state);
  machine.apply(restored, { type: 'ack_audit', ids: ['k1'], member: 'a' }, ctx(7));
  t.deepEqual(state.pending.get('k1')!.awaiting, ['a', 'b', 'c'], 'the original is untouched');
});

test('restore reads a snapshot of the older object form', (t) => {
  const restored = machine.restore({ authorities: { proj: { home: 'east', epoch: 3 } }, pending: {} });
  t.deepEqual(restored.authorities.get('proj'), { home: 'east', epoch: 3 });
  t.is(restored.transfers.size, 0);
});

test('restore refuses a malformed snapshot with a message saying what it expected', (t) => {
  t.throws(() => machine.restore({ nope: 1 }), { message: /expected \{authorities, pending, transfers\}/ });
});

for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
  test(`${name} is an ordinary authority id: established, transferred, snapshotted and restored`, (t) => {
    const state = machine.initial();
    t.true(state.authorities.get(name) === undefined, 'unknown before it is established');
    t.like(machine.apply(state, registration({ authority: name }), ctx(1)), { ok: false, reason: 'unknown_authority' });
    establish(state, name, 'east');
    readyToCommit(state, { authority: name });
    t.like(machine.apply(state, commit({ authority: name }), ctx(5)), { ok: true, record: { authority: name, epoch: 2 } });
    const restored = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(state))));
    t.deepEqual(restored.authorities.get(name), state.authorities.get(name));
    t.like(restored.authorities.get(name), { home: 'west', epoch: 2, catchUp: { settled: [] } });
    t.deepEqual([...restored.pendingByAuthority.get(name)!].sort(), ['1-0', 'k1'], 'the establish and the planned commit');
    t.deepEqual(restored.chains.get(name), state.chains.get(name), 'the chain head is carried by snapshots');
  });
}

test('a member of the new home settles the catch-up of the epoch its move minted, once; a settle of another epoch changes nothing', (t) => {
  const state = established();
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5));
  const settle = (member: string, epoch = 2) => machine.apply(state, { type: 'settle_catch_up', authority: 'proj', epoch, member }, ctx(6));
  t.deepEqual(settle('west-1', 1), { ok: false, reason: 'stale_epoch' });
  t.deepEqual(state.authorities.get('proj')!.catchUp!.settled, []);
  const before = state.authorities.get('proj');
  t.deepEqual(settle('west-1'), { ok: true, settled: ['west-1'], done: false });
  t.deepEqual(settle('west-1'), { ok: true, settled: ['west-1'], done: false }, 'a repeated settle is idempotent');
  t.deepEqual(settle('west-2'), { ok: true, settled: ['west-1', 'west-2'], done: false });
  t.deepEqual(before!.catchUp!.settled, [], 'the record is replaced, not changed in place (a capture may share it)');
  const restored = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(state))));
  t.deepEqual(restored.authorities.get('proj')!.catchUp!.settled, ['west-1', 'west-2'], 'carried by snapshots');
  t.deepEqual(machine.apply(state, { type: 'settle_catch_up', authority: 'ghost', epoch: 1, member: 'west-1' }, ctx(7)), { ok: false, reason: 'unknown_authority' });
});

test('a move stays in the index of unsettled moves of its home until every member the settler names settled; a failover takes it out', (t) => {
  const state = established();
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5));
  const listed = () => [...(state.unsettledByHome.get('west') ?? [])];
  t.deepEqual(listed(), ['proj'], 'the commit lists it under its new home');
  const settle = (member: string) => machine.apply(state, { type: 'settle_catch_up', authority: 'proj', epoch: 2, member, homeMembers: ['west-1', 'west-2'] }, ctx(6));
  t.like(settle('west-1'), { ok: true, done: false });
  t.deepEqual(listed(), ['proj'], 'west-2 has not settled yet');
  t.like(settle('west-2'), { ok: true, done: true });
  t.deepEqual(listed(), [], 'every member named settled: the move leaves the index');
  t.true(state.authorities.get('proj')!.catchUp!.done, 'the record says so, so a restore rebuilds the same index');
  t.false(machine.restore(JSON.parse(JSON.stringify(machine.snapshot(state)))).unsettledByHome.has('west'));

  const other = established();
  readyToCommit(other);
  machine.apply(other, commit(), ctx(5));
  t.true(machine.restore(JSON.parse(JSON.stringify(machine.snapshot(other)))).unsettledByHome.get('west')?.has('proj'), 'rebuilt by a restore');
  machine.apply(other, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(6));
  t.deepEqual(other.unsettledByHome.size, 0, 'a failover leaves no requirement, so nothing to settle');
});

test('a failover move leaves no catch-up requirement behind: it promises no barrier', (t) => {
  const state = established();
  readyToCommit(state);
  machine.apply(state, commit(), ctx(5));
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'north' }, ctx(6));
  t.deepEqual(state.authorities.get('proj'), { home: 'north', epoch: 3 });
});

test('an unknown command changes nothing and is answered as a refusal', (t) => {
  const state = established();
  const before = structuredClone(snapshotOwnership(state));
  t.deepEqual(machine.apply(state, { type: 'mystery' } as never, ctx(2)), { ok: false, reason: 'unknown_command' });
  t.deepEqual(snapshotOwnership(state), before);
});

test('one key names one transfer: a registration under a key registered for another authority is refused, and so is one after that transfer was called off', (t) => {
  const state = established();
  machine.apply(state, { type: 'transfer_authority', authority: 'lib', target: 'east' }, ctx(2));
  t.like(machine.apply(state, registration(), ctx(3)), { ok: true, existing: false });
  t.like(machine.apply(state, registration({ authority: 'lib' }), ctx(4)), { ok: false, reason: 'key_names_another_transfer', running: { id: 'k1', authority: 'proj' } });
  t.false(state.transfers.has('lib'));
  t.is(state.transfersById.get('k1'), 'proj');
  machine.apply(state, { type: 'release_transfer', authority: 'proj', id: 'k1', why: 'cancelled' }, ctx(5));
  t.false(state.transfersById.has('k1'));
  t.like(machine.apply(state, registration({ authority: 'lib' }), ctx(6)), { ok: false, reason: 'key_abandoned', abandoned: { id: 'k1', authority: 'proj', why: 'cancelled', released: 5 } });
  t.false(state.transfers.has('lib'));
  // The move it named may be reissued under it.
  t.like(machine.apply(state, registration(), ctx(7)), { ok: true, existing: false, intent: { authority: 'proj' } });
});

test('a transfer released without its commit is remembered in the replicated state: its key is refused for another move, and a move committed after it supersedes it', (t) => {
  const state = established();
  machine.apply(state, registration(), ctx(2));
  machine.apply(state, { type: 'release_transfer', authority: 'proj', id: 'k1', why: 'timed_out' }, ctx(3));
  t.deepEqual(latestAbandoned(state, 'proj'), { id: 'k1', authority: 'proj', source: 'east', target: 'west', reason: 'drain east', why: 'timed_out', released: 3 });
  t.like(machine.apply(state, registration({ target: 'north' }), ctx(4)), { ok: false, reason: 'key_abandoned' });
  t.like(machine.apply(state, registration({ reason: 'another reason' }), ctx(5)), { ok: false, reason: 'key_abandoned' });
  readyToCommit(state, { id: 'k2' });
  t.like(machine.apply(state, commit({ id: 'k2' }), ctx(6)), { ok: true });
  t.is(latestAbandoned(state, 'proj'), undefined, 'a repeated cancel now answers for the move');
  t.like(abandonedKey(state, 'k1'), { superseded: true }, 'the key is still refused for another move');
  t.like(machine.apply(state, registration({ source: 'west', target: 'north' }), ctx(7)), { ok: false, reason: 'key_abandoned' });
});

test('a failover that drops a registered transfer remembers its key, superseded by the failover itself', (t) => {
  const state = established();
  machine.apply(state, registration(), ctx(2));
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'north' }, ctx(3));
  t.like(abandonedKey(state, 'k1'), { authority: 'proj', why: 'failover', released: 3, superseded: true });
  t.is(latestAbandoned(state, 'proj'), undefined);
});

test('abandoned keys are bounded per authority and in total, the oldest going first, alike after a snapshot', (t) => {
  const state = established();
  let index = 2;
  const abandon = (id: string, authority = 'proj') => {
    machine.apply(state, registration({ id, authority }), ctx(index++));
    machine.apply(state, { type: 'release_transfer', authority, id, why: 'cancelled' }, ctx(index++));
  };
  for (let i = 0; i < ABANDONED_PER_AUTHORITY + 2; i++) abandon(`p${i}`);
  t.is(state.abandonedByAuthority.get('proj')!.length, ABANDONED_PER_AUTHORITY);
  t.is(abandonedKey(state, 'p0'), undefined, 'the oldest of the authority left');
  t.is(abandonedKey(state, 'p1'), undefined);
  t.like(abandonedKey(state, `p${ABANDONED_PER_AUTHORITY + 1}`), { authority: 'proj' });
  t.is(latestAbandoned(state, 'proj')!.id, `p${ABANDONED_PER_AUTHORITY + 1}`);
  // The total bound: one authority per key, past ABANDONED_TOTAL keys the oldest leave.
  for (let i = 0; i < ABANDONED_TOTAL + 3; i++) {
    const authority = `a${i}`;
    machine.apply(state, { type: 'transfer_authority', authority, target: 'east' }, ctx(index++));
    abandon(`t${i}`, authority);
  }
  t.is(state.abandoned.size, ABANDONED_TOTAL);
  t.is(state.abandonedById.size, ABANDONED_TOTAL);
  t.is(abandonedKey(state, `p${ABANDONED_PER_AUTHORITY + 1}`), undefined);
  t.is(abandonedKey(state, 't2'), undefined);
  t.like(abandonedKey(state, 't3'), { authority: 'a3' });
  const restored = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(state))));
  t.deepEqual(restored.abandonedById, state.abandonedById);
  t.deepEqual(restored.abandonedByAuthority, state.abandonedByAuthority);
  t.like(machine.apply(restored, registration({ id: 't3', authority: 'proj' }), ctx(index)), { ok: false, reason: 'key_abandoned' });
});

test('a new registration without source positions is refused (no barrier), while a join of the same key needs none', (t) => {
  const state = established();
  // A driver whose view still showed its key registered proposes a join with no positions; the
  // registration was released meanwhile, so the join would register a move with no barrier.
  t.deepEqual(machine.apply(state, registration({ sources: [] }), ctx(2)), { ok: false, reason: 'barrier_unread' });
  t.false(state.transfers.has('proj'), 'nothing is registered');
  t.like(machine.apply(state, registration(), ctx(3)), { ok: true, existing: false });
  t.like(machine.apply(state, registration({ sources: [], driver: 'north-1' }), ctx(4)), { ok: true, existing: true, intent: { driver: 'west-1', sources: [{ member: 'east-1', barrier: 4800 }] } });
});

test('a state restored from a snapshot taken before keys were tracked files none until the track_abandoned_keys entry, so every member tracks from one point of the log', (t) => {
  const old = machine.restore({ authorities: [['proj', { home: 'east', epoch: 1 }]], pending: [], transfers: [] });
  t.false(old.abandonedTracked);
  machine.apply(old, registration(), ctx(2));
  machine.apply(old, { type: 'release_transfer', authority: 'proj', id: 'k1', why: 'cancelled' }, ctx(3));
  t.is(abandonedKey(old, 'k1'), undefined, 'not tracked yet: nothing filed');
  t.like(machine.apply(old, registration({ target: 'north' }), ctx(4)), { ok: true }, 'nor refused');
  machine.apply(old, { type: 'release_transfer', authority: 'proj', id: 'k1', why: 'cancelled' }, ctx(5));
  t.deepEqual(machine.apply(old, { type: 'track_abandoned_keys' }, ctx(6)), { ok: true, tracked: true });
  machine.apply(old, registration({ id: 'k2' }), ctx(7));
  machine.apply(old, { type: 'release_transfer', authority: 'proj', id: 'k2', why: 'timed_out' }, ctx(8));
  t.like(abandonedKey(old, 'k2'), { why: 'timed_out', released: 8 });
  const restored = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(old))));
  t.true(restored.abandonedTracked);
  const assembly = machine.assemble();
  for (const piece of machine.capture(old).pieces()) assembly.add(JSON.parse(JSON.stringify(piece)));
  const assembled = assembly.finish();
  t.true(assembled.abandonedTracked);
  t.like(abandonedKey(assembled, 'k2'), { released: 8 });
  t.true(machine.initial().abandonedTracked, 'a state begun with tracking tracks from its start');
});

