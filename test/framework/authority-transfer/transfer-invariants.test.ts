import test from 'ava';
import type { OwnershipState, TransferIntent } from '@baton/authority-transfer/internal/ownership.js';
import { planInvariants, registrationInvariants } from '@baton/authority-transfer/internal/transfer-invariants.js';
import { TransferPlan } from '@baton/authority-transfer/internal/transfer-plan.js';
import { request } from './harness.js';

// The invariants the simulations check after every step: each one names what it found broken,
// so a plan or a state that breaks it fails the run with that sentence.

const plan = (frontier: number | undefined) => {
  const p = new TransferPlan(request(), 0, 1000);
  p.cursors = [{ origin: { member: 'east-1', incarnation: 'i1' }, barrier: 10, frontier, replica: 'r1' }];
  return p;
};

test('caught up implies frontier >= barrier: a plan Ready short of its barrier is a violation', (t) => {
  const caughtUp = plan(10);
  caughtUp.fold([{ serial: 10, replica: 'r1' }], 1);
  t.is(caughtUp.state, 'Ready');
  t.deepEqual(planInvariants(caughtUp), []);
  const short = plan(7);
  short.state = 'Ready';
  t.regex(planInvariants(short)[0] ?? '', /Ready while the target holds east-1's feed through 7, short of 10/);
  const unread = plan(undefined);
  unread.state = 'Ready';
  t.regex(planInvariants(unread)[0] ?? '', /nothing read/);
  t.deepEqual(planInvariants(plan(3)), [], 'AwaitingCatchUp short of the barrier is what it says');
});

test('committing implies finals complete: a claim without a freeze holding every final is a violation', (t) => {
  const p = plan(10);
  p.fold([{ serial: 10, replica: 'r1' }], 1);
  t.true(p.claim());
  t.deepEqual(planInvariants(p), [`transfer ${p.id} is Committing without a freeze holding every final serial`]);
  p.frozenAt = 1;
  t.deepEqual(planInvariants(p), []);
});

const intent = (id: string, authority: string): TransferIntent => ({
  ...request({ id, authority }),
  driver: 'east-1',
  sources: [],
  deadline: 0,
  frozen: false,
  freezes: 0,
  registered: 1,
});

/** A state holding just these registrations, sealed records and abandoned keys (the invariants read nothing else). */
const state = (transfers: [string, TransferIntent][], sealed: string[] = [], abandoned: TransferIntent[] = []) =>
  ({
    transfers: new Map(transfers),
    pending: new Map(sealed.map((id) => [id, { record: { id, authority: 'a', epoch: 2 }, awaiting: [] }])),
    abandoned: new Map(abandoned.map((a, i) => [i + 1, { ...a, why: 'cancelled', released: i + 1 }])),
    abandonedById: new Map(abandoned.map((a, i) => [a.id, i + 1])),
  }) as unknown as OwnershipState;

test('at most one registration per authority, filed under it; none left beside its committed record', (t) => {
  t.deepEqual(registrationInvariants(state([['a', intent('k1', 'a')], ['b', intent('k2', 'b')]])), []);
  t.regex(registrationInvariants(state([['a', intent('k1', 'b')]]))[0] ?? '', /k1 of b is registered under a/);
  t.regex(registrationInvariants(state([['a', intent('k1', 'a')], ['b', { ...intent('k1', 'b') }]]))[0] ?? '', /k1 is registered for both a and b/);
  t.regex(registrationInvariants(state([['a', intent('k1', 'a')]], ['k1']))[0] ?? '', /k1 committed a at epoch 2 and is still registered/);
});

test('a key called off is registered again only for the move it named', (t) => {
  t.deepEqual(registrationInvariants(state([['a', intent('k1', 'a')]], [], [intent('k1', 'a')])), []);
  t.regex(registrationInvariants(state([['b', intent('k1', 'b')]], [], [intent('k1', 'a')]))[0] ?? '', /k1 is registered for b .* but it was called off as a /);
});
