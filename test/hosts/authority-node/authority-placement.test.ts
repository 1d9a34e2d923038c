import test from 'ava';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { ADMIN, READER, startNode, transfer } from './node-harness.js';

test('allowedHomes bounds where a planned transfer may go; the placement is shown and carried across the move', async (t) => {
  const n = await startNode();
  t.teardown(() => n.host.stop());
  t.is((await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } })).status, 200);

  const pinned = await n.call('PUT', '/availability/v1/authorities/proj/placement', { token: ADMIN, body: { allowedHomes: ['east'] } });
  t.is(pinned.status, 200);
  t.deepEqual(pinned.body, { authority: 'proj', home: 'east', epoch: 1, allowedHomes: ['east'], preferredHome: null });
  n.probe.answer('west', 0);
  const refused = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: transfer });
  t.is(refused.status, 409);
  t.like(refused.body, { type: 'urn:baton:problem:move-refused-target-not-allowed', authority: 'proj' });
  t.like((await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, { home: 'east', epoch: 1 });

  const opened = await n.call('PUT', '/availability/v1/authorities/proj/placement', { token: ADMIN, body: { allowedHomes: ['west', 'east'], preferredHome: 'west' } });
  t.deepEqual(opened.body, { authority: 'proj', home: 'east', epoch: 1, allowedHomes: ['east', 'west'], preferredHome: 'west' });
  const moved = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: transfer, key: 'placed-move' });
  t.is(moved.status, 200);
  t.like((await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, { home: 'west', epoch: 2, allowedHomes: ['east', 'west'], preferredHome: 'west' });

  const cleared = await n.call('PUT', '/availability/v1/authorities/proj/placement', { token: ADMIN, body: { allowedHomes: null } });
  t.like(cleared.body, { allowedHomes: null, preferredHome: null });
  const plain = (await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).body as Record<string, unknown>;
  t.false('allowedHomes' in plain || 'preferredHome' in plain, 'a cleared placement reads as none');
});

test('a placement naming a datacenter the roster does not list, an empty list or a preference outside it answers 400; an unknown authority 404', async (t) => {
  const n = await startNode();
  t.teardown(() => n.host.stop());
  await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
  const put = (body: unknown, authority = 'proj') => n.call('PUT', `/availability/v1/authorities/${authority}/placement`, { token: ADMIN, body });
  for (const body of [{ allowedHomes: ['south'] }, { allowedHomes: [] }, { allowedHomes: ['east'], preferredHome: 'west' }, { preferredHome: 'south' }, { allowed: ['east'] }]) {
    t.is((await put(body)).status, 400, JSON.stringify(body));
  }
  t.is((await put({ allowedHomes: ['east'] }, 'nothing-here')).status, 404);
  t.is((await n.call('PUT', '/availability/v1/authorities/proj/placement', { token: READER, body: { allowedHomes: ['east'] } })).status, 403);
});

test('the placement survives a snapshot and restore, and a raw move (a failover) carries it', (t) => {
  const machine = new OwnershipStateMachine();
  const state = machine.initial();
  const ctx = (index: number) => ({ position: { term: 1, index }, voters: ['m1'] });
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'east' } as never, ctx(1));
  t.like(machine.apply(state, { type: 'set_authority_placement', authority: 'proj', allowedHomes: ['east', 'west'], preferredHome: 'east' }, ctx(2)), { ok: true });
  t.like(machine.apply(state, { type: 'set_authority_placement', authority: 'proj', allowedHomes: ['east'], preferredHome: 'west' }, ctx(3)), { ok: false, reason: 'invalid_placement' });
  machine.apply(state, { type: 'transfer_authority', authority: 'proj', target: 'north' } as never, ctx(4));
  t.like(state.authorities.get('proj'), { home: 'north', epoch: 2, allowedHomes: ['east', 'west'], preferredHome: 'east' });
  const restored = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(state))));
  t.like(restored.authorities.get('proj'), { home: 'north', allowedHomes: ['east', 'west'], preferredHome: 'east' });
});
