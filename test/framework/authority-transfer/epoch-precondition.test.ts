import test from 'ava';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { applyContext, registration } from './ownership-commands.js';

// The expected epoch is decided by the state machine, in log order: whatever two drivers read,
// the second registration or raw move meets the epoch the first one left.

const machine = new OwnershipStateMachine();
const ctx = (index: number) => applyContext(index, ['east-1'], 1);

test('a planned transfer registers only while the authority is at the expected epoch', (t) => {
  const state = machine.initial();
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(1));
  t.deepEqual(machine.apply(state, registration({ expectedEpoch: 2 }), ctx(2)), { ok: false, reason: 'precondition_failed', home: 'east', epoch: 1 });
  t.is(state.transfers.get('proj'), undefined);
  t.like(machine.apply(state, registration({ expectedEpoch: 1 }), ctx(3)), { ok: true, existing: false });
});

test('of two operators who read epoch 1, the raw move that lands second is refused at epoch 2', (t) => {
  const state = machine.initial();
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' }, ctx(1));
  t.like(machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'west', expectedSource: 'east', expectedEpoch: 1 }, ctx(2)), { ok: true, epoch: 2 });
  t.deepEqual(
    machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'north', expectedSource: 'east', expectedEpoch: 1 }, ctx(3)),
    { ok: false, reason: 'precondition_failed', home: 'west', epoch: 2 },
  );
  // A registration that read epoch 1 before the move is refused too, before its source is checked.
  t.like(machine.apply(state, registration({ source: 'west', target: 'east', expectedEpoch: 1 }), ctx(4)), { ok: false, reason: 'precondition_failed', epoch: 2 });
  t.like(state.authorities.get('proj'), { home: 'west', epoch: 2 });
});

test('an expected epoch on an authority with no home fails: nothing is established', (t) => {
  const state = machine.initial();
  t.deepEqual(machine.apply(state, { type: 'transfer_authority', authority: 'new', target: 'east', expectedEpoch: 1 }, ctx(1)), { ok: false, reason: 'precondition_failed' });
  t.is(state.authorities.get('new'), undefined);
});
