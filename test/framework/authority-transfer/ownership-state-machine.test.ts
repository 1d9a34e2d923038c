import test from 'ava';
import type { CommitPlannedTransferCommand, OwnershipState } from '../../../framework/authority-transfer/ownership.js';
import { OwnershipStateMachine } from '../../../framework/authority-transfer/ownership-state-machine.js';

const machine = new OwnershipStateMachine();
const ctx = (index: number, voters = ['a', 'b', 'c'], term = 3) => ({ position: { term, index }, voters });

function commit(overrides: Partial<CommitPlannedTransferCommand> = {}): CommitPlannedTransferCommand {
  return {
    type: 'commit_planned_transfer',
    id: 'k1',
    authority: 'proj',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    reason: 'drain east',
    barrier: 4821,
    ...overrides,
  };
}

function established(): OwnershipState {
  const state = machine.initial();
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(1));
  return state;
}

test('the raw transfer_authority command establishes an unknown authority at epoch 1', (t) => {
  const state = machine.initial();
  const result = machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(1));
  t.deepEqual(result, { ok: true, authority: 'proj', source: undefined, home: 'east', epoch: 1 });
  t.deepEqual(state.authorities.proj, { home: 'east', epoch: 1 });
});

test('the raw command moves unconditionally and mints the next epoch', (t) => {
  const state = established();
  const result = machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'west' }, ctx(2));
  t.deepEqual(result, { ok: true, authority: 'proj', source: 'east', home: 'west', epoch: 2 });
});

test('the raw command with expectedSource refuses when the home changed', (t) => {
  const state = established();
  const result = machine.apply(
    state,
    { type: 'transfer_authority', authority: 'proj', target: 'west', expectedSource: 'north' },
    ctx(2),
  );
  t.deepEqual(result, { ok: false, reason: 'source_not_home', home: 'east', epoch: 1 });
  t.deepEqual(state.authorities.proj, { home: 'east', epoch: 1 });
});

test('a move to the current home is refused and mints no epoch', (t) => {
  const state = established();
  const result = machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(2));
  t.like(result, { ok: false, reason: 'already_home' });
  t.is(state.authorities.proj.epoch, 1);
});

test('a planned commit seals the request with the post-mutation epoch and the deciding position', (t) => {
  const state = established();
  const result = machine.apply(state, commit(), ctx(9043, ['a', 'b', 'c'], 12));
  t.deepEqual(result, {
    ok: true,
    record: {
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
    },
  });
  t.deepEqual(state.authorities.proj, { home: 'west', epoch: 2 });
});

test('a planned commit keeps one projection acknowledgement per voter present at commit', (t) => {
  const state = established();
  machine.apply(state, commit(), ctx(5, ['a', 'b', 'c']));
  t.deepEqual(state.pending.k1.awaiting, ['a', 'b', 'c']);
});

test('a planned commit from a datacenter that is not the home is refused and changes nothing', (t) => {
  const state = established();
  const result = machine.apply(state, commit({ source: 'north' }), ctx(5));
  t.deepEqual(result, { ok: false, reason: 'source_not_home', home: 'east', epoch: 1 });
  t.deepEqual(state.pending, {});
  t.deepEqual(state.authorities.proj, { home: 'east', epoch: 1 });
});

test('a planned commit of an authority without a home is refused', (t) => {
  const state = machine.initial();
  t.like(machine.apply(state, commit(), ctx(1)), { ok: false, reason: 'unknown_authority' });
});

test('a later move cannot change the epoch recorded for an earlier transfer', (t) => {
  const state = established();
  const first = machine.apply(state, commit(), ctx(5));
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'north' }, ctx(6));
  t.like(first, { ok: true, record: { epoch: 2 } });
  t.is(state.pending.k1.record.epoch, 2);
  t.is(state.authorities.proj.epoch, 3);
});

test('the same transfer applied twice while pending answers its sealed record, not a second move', (t) => {
  const state = established();
  const first = machine.apply(state, commit(), ctx(5));
  const again = machine.apply(state, commit({ source: 'west', target: 'east' }), ctx(6));
  t.deepEqual(again, first);
  t.deepEqual(state.authorities.proj, { home: 'west', epoch: 2 });
});

test('an ack releases one voter; the record leaves once every voter acked', (t) => {
  const state = established();
  machine.apply(state, commit(), ctx(5, ['a', 'b']));
  t.deepEqual(machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'a' }, ctx(6)), { ok: true, released: [], unknown: [] });
  t.deepEqual(state.pending.k1.awaiting, ['b']);
  t.deepEqual(machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'b' }, ctx(7)), { ok: true, released: ['k1'], unknown: [] });
  t.false('k1' in state.pending);
});

test('an ack of an unknown or released record is a harmless no-op', (t) => {
  const state = established();
  const before = structuredClone(state);
  t.deepEqual(machine.apply(state, { type: 'ack_audit', ids: ['nope'], member: 'a' }, ctx(6)), {
    ok: true,
    released: [],
    unknown: ['nope'],
  });
  t.deepEqual(state, before);
});

test('a voter leaving the membership releases its obligations', (t) => {
  const state = established();
  machine.apply(state, commit(), ctx(5, ['a', 'b', 'c']));
  machine.apply(state, commit({ id: 'k2', authority: 'proj', source: 'west', target: 'east' }), ctx(6, ['a', 'b', 'c']));
  machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'a' }, ctx(7));
  machine.apply(state, { type: 'ack_audit', ids: ['k1'], member: 'b' }, ctx(8));
  machine.membershipChanged(state, ctx(9, ['a', 'b']));
  t.false('k1' in state.pending, 'only c was left and it left');
  t.deepEqual(state.pending.k2.awaiting, ['a', 'b']);
});

test('one ack carries a batch of records', (t) => {
  const state = established();
  machine.apply(state, commit(), ctx(5, ['a']));
  machine.apply(state, commit({ id: 'k2', source: 'west', target: 'east' }), ctx(6, ['a', 'b']));
  const result = machine.apply(state, { type: 'ack_audit', ids: ['k1', 'k2', 'gone'], member: 'a' }, ctx(7));
  t.deepEqual(result, { ok: true, released: ['k1'], unknown: ['gone'] });
  t.deepEqual(state.pending.k2.awaiting, ['b']);
});

test('snapshots carry pending records and ownership, as deep copies', (t) => {
  const state = established();
  machine.apply(state, commit(), ctx(5));
  const snap = JSON.parse(JSON.stringify(machine.snapshot(state)));
  const restored = machine.restore(snap);
  t.deepEqual(restored, state);
  machine.apply(restored, { type: 'ack_audit', ids: ['k1'], member: 'a' }, ctx(6));
  t.deepEqual(state.pending.k1.awaiting, ['a', 'b', 'c'], 'the original is untouched');
});

test('restore refuses a malformed snapshot with a message saying what it expected', (t) => {
  t.throws(() => machine.restore({ nope: 1 }), { message: /expected \{authorities, pending\}/ });
});

test('an unknown command changes nothing and is answered as a refusal', (t) => {
  const state = established();
  const before = structuredClone(state);
  t.deepEqual(machine.apply(state, { type: 'mystery' } as never, ctx(2)), { ok: false, reason: 'unknown_command' });
  t.deepEqual(state, before);
});
