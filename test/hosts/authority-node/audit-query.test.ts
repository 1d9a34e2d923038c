import test from 'ava';
import { ADMIN, READER, startNode, transfer } from './node-harness.js';

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

  const all = await n.call('GET', '/availability/v1/audit?subject=proj', { token: READER });
  t.is(all.status, 200);
  t.deepEqual(all.body.records.map((r: { id: string; actor: string }) => [r.id, r.actor]), [['move-1', 'olivia']]);
  t.is(all.body.next, null);
  const planned = await n.call('GET', '/availability/v1/audit?subject=proj&kind=planned_transfer&limit=1', { token: READER });
  t.deepEqual(planned.body.records, all.body.records);
  const elsewhere = await n.call('GET', '/availability/v1/audit?subject=lib', { token: READER });
  t.deepEqual(elsewhere.body, { authority: 'lib', records: [], next: null }, 'each authority has its own trail');
  const past = await n.call('GET', `/availability/v1/audit?subject=proj&before=${moved.body.commit_index}`, { token: READER });
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
