import test from 'ava';
import { auditRecordHash, verifyTrail } from '@baton/consensus';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { ADMIN, READER, startNode, transfer, waitFor } from './node-harness.js';

test('GET /availability/v1/audit reads one authority trail newest first: subject required and known, kind checked, a page past the end empty', async (t) => {
  const n = await startNode();
  t.teardown(() => n.host.stop());
  const established = await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
  t.is(established.status, 200);
  n.probe.answer('west', 0);
  const moved = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'move-1', body: transfer });
  t.is(moved.status, 200);
  const other = await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'lib', target: 'east' } });
  t.is(other.status, 200);

  // The projection stores each record once it committed: wait for the three to leave the pending set.
  await waitFor(() => n.consensus.view().state.pending.size === 0, 'every record stored');
  const all = await n.call('GET', '/availability/v1/audit?subject=proj', { token: READER });
  t.is(all.status, 200);
  const establishId = `${established.body.commit_index}-0`;
  t.is(established.body.audit_id, establishId, 'the raw command names the record it sealed');
  t.deepEqual(
    all.body.records.map((r: { id: string; kind: string; actor: string; from: string | null; to: string }) => [r.id, r.kind, r.actor, r.from, r.to]),
    [
      ['move-1', 'planned_transfer', 'olivia', 'east', 'west'],
      [establishId, 'authority_established', 'olivia', null, 'east'],
    ],
  );
  t.is(all.body.records[0].prev_hash, all.body.records[1].hash, "the planned transfer's record is chained after the establish");
  t.is(all.body.next, null);
  const planned = await n.call('GET', '/availability/v1/audit?subject=proj&kind=planned_transfer&limit=1', { token: READER });
  t.deepEqual(planned.body.records, [all.body.records[0]]);
  const establishes = await n.call('GET', '/availability/v1/audit?subject=proj&kind=authority_established', { token: READER });
  t.deepEqual(establishes.body.records, [all.body.records[1]]);
  const failovers = await n.call('GET', '/availability/v1/audit?subject=proj&kind=failover_transfer', { token: READER });
  t.deepEqual(failovers.body, { authority: 'proj', records: [], next: null }, 'a known kind with no record answers an empty page');
  const elsewhere = await n.call('GET', '/availability/v1/audit?subject=lib', { token: READER });
  t.deepEqual(
    elsewhere.body.records.map((r: { id: string; kind: string; prev_hash: string }) => [r.id, r.kind, r.prev_hash]),
    [[`${other.body.commit_index}-0`, 'authority_established', '']],
    'each authority has its own trail, chained from its own start',
  );
  const older = await n.call('GET', `/availability/v1/audit?subject=proj&before=${moved.body.commit_index}`, { token: READER });
  t.deepEqual(older.body.records, [all.body.records[1]]);
  const past = await n.call('GET', `/availability/v1/audit?subject=proj&before=${established.body.commit_index}`, { token: READER });
  t.deepEqual(past.body, { authority: 'proj', records: [], next: null }, 'a page past the end is empty, not an error');

  for (const [query, why] of [
    ['', 'no subject'],
    ['?subject=nobody', 'an authority without a home'],
    ['?subject=proj&kind=exploded', 'an unknown kind'],
    ['?subject=proj&limit=0', 'a limit out of bounds'],
    ['?subject=proj&color=red', 'an unknown parameter'],
  ]) {
    const refused = await n.call('GET', `/availability/v1/audit${query}`, { token: READER });
    t.is(refused.status, 400, why);
    t.is(refused.headers.get('content-type'), 'application/problem+json', why);
  }
  t.is((await n.call('GET', '/availability/v1/audit?subject=proj')).status, 401, 'the listener authenticates');
});

test('a failover seals failover_transfer with its actor, reason and loss report, chained after the establish; the chain route answers the head; a replay seals nothing', async (t) => {
  const clock = new VirtualClock();
  const n = await startNode({ clock });
  t.teardown(() => n.host.stop());
  const established = await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'west', reason: 'placed' } });
  t.is(established.status, 200, JSON.stringify(established.body));
  // west-1 never reports: the tracker calls it Dead, which a failover requires.
  clock.advance(30_000);
  const failover = { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east', reason: 'west is down' };
  const moved = await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'fo-1', body: failover });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.is(moved.body.audit_id, `${moved.body.commit_index}-0`);
  const again = await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'fo-1', body: failover });
  t.like(again.body, { replayed: true, audit_id: moved.body.audit_id }, 'the replay answers the first decision and its record');
  await waitFor(() => n.consensus.view().state.pending.size === 0, 'both records stored');

  const page = await n.call('GET', '/availability/v1/audit?subject=proj', { token: READER });
  const [record, establish] = page.body.records;
  t.is(page.body.records.length, 2, 'the replay sealed nothing');
  t.like(record, {
    id: moved.body.audit_id,
    kind: 'failover_transfer',
    subject_type: 'authority',
    subject: 'proj',
    from: 'west',
    to: 'east',
    epoch_before: 1,
    epoch_after: 2,
    actor: 'olivia',
    reason: 'west is down',
    commit_index: moved.body.commit_index,
    time: clock.now(),
    prev_hash: establish.hash,
  });
  t.like(establish, { kind: 'authority_established', reason: 'placed', epoch_before: 0, epoch_after: 1, prev_hash: '' });
  // east-1 never pulled west-1's feed (its address answers nothing): the report says so, it does not guess.
  t.deepEqual(record.loss, { lost: [], lost_count: 0, feeds: [], unknown: [{ member: 'west-1', why: 'east-1 never pulled its feed' }], read_by: 'east-1' });
  const { from: _f, to: _t, epoch_after: _e, loss: _l, ...stored } = record;
  t.is(auditRecordHash(stored), record.hash, 'the listed record is the one hashed');

  const chain = await n.call('GET', '/availability/v1/audit/chain?subject=proj', { token: READER });
  t.is(chain.status, 200);
  t.deepEqual(chain.body, { authority: 'proj', head: { records: 2, hash: record.hash, commit_index: record.commit_index, seq: 0 }, anchors: [] });
  const strip = ({ from: _a, to: _b, epoch_after: _c, loss: _d, ...r }: Record<string, unknown>) => r;
  t.like(verifyTrail([strip(establish), strip(record)] as never, { anchors: [], head: chain.body.head }), { ok: true, checked: 2, behind: false });
  const byId = await n.call('GET', `/availability/v1/audit/${record.id}`, { token: READER });
  t.is(byId.status, 200);
  t.deepEqual(byId.body, record, 'a record by id is the one the listing shows');
  t.is((await n.call('GET', '/availability/v1/audit/999999-0', { token: READER })).status, 404);
  t.is((await n.call('GET', '/availability/v1/audit/chain?subject=nobody', { token: READER })).status, 400, 'an authority without a home');
  t.is((await n.call('GET', '/availability/v1/audit/chain?subject=proj&x=1', { token: READER })).status, 400, 'an unknown parameter');
});

test("a failover's loss report lists the authority's serials the proposer holds from the old home that the new home had not applied", async (t) => {
  const clock = new VirtualClock();
  const n = await startNode({ clock });
  t.teardown(() => n.host.stop());
  t.is((await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'west' } })).status, 200);
  // What east-1 pulled of west-1's feed before west went down: three writes of proj, one of lib.
  await n.node.replicas.reset('west-1', 'w1');
  const write = (serial: number, authority: string) => ({ serial, authority, operation: `op-${serial}`, epoch: 1 });
  await n.node.replicas.apply('west-1', 'w1', [write(1, 'proj'), write(2, 'lib'), write(3, 'proj'), write(4, 'proj')]);
  // The new home (as the probe reads it) applied west-1's feed through serial 1 only.
  n.probe.answer('east', 1);
  clock.advance(30_000);
  const moved = await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' } });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.deepEqual(n.probe.calls.at(-1)?.origin, { member: 'west-1', incarnation: 'w1' });
  await waitFor(() => n.consensus.view().state.pending.size === 0, 'the failover record stored');
  const page = await n.call('GET', '/availability/v1/audit?subject=proj&kind=failover_transfer', { token: READER });
  t.deepEqual(page.body.records[0].loss, {
    lost: [
      { member: 'west-1', serial: 3 },
      { member: 'west-1', serial: 4 },
    ],
    lost_count: 2,
    feeds: [{ member: 'west-1', incarnation: 'w1', pulled: 4, applied: 1 }],
    unknown: [],
    read_by: 'east-1',
  });
});
