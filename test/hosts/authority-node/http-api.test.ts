import { peerHeaders } from '../../support/peer-auth.js';
import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { ADMIN, PEER, READER, WRITER, startNode, transfer, waitFor } from './node-harness.js';

type Node = Awaited<ReturnType<typeof startNode>>;

async function withNode(fn: (node: Node) => Promise<void>, overrides: Parameters<typeof startNode>[0] = {}) {
  const node = await startNode(overrides);
  try {
    await fn(node);
  } finally {
    await node.host.stop();
  }
}

async function establish(n: Node, authority = 'proj', home = 'east') {
  const res = await n.call('POST', '/availability/v1/commands', {
    token: ADMIN,
    body: { type: 'transfer_authority', authority, target: home },
  });
  if (res.status !== 200) throw new Error(`establish answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as { commit_index: number; audit_id: string };
}

test('POST /availability/v1/transfers answers 200 with the sealed audit record; the actor is the principal', (t) =>
  withNode(async (n) => {
    await establish(n);
    await n.node.feed.append({ authority: 'proj', operation: 'w1', epoch: 1 });
    n.probe.answer('west', 1);
    const res = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: '5f0c-drain-proj', body: transfer });
    t.is(res.status, 200);
    // The seed's fields, and the trail's: kind, subject, epoch before, the driver's time and the hash-chain links.
    t.deepEqual(Object.keys(res.body).sort(), [
      'actor', 'authority', 'barrier', 'commit_index', 'commit_term', 'epoch', 'epoch_before', 'hash', 'id', 'kind', 'prev_hash', 'reason', 'source', 'subject', 'subject_type', 'target', 'time',
    ]);
    t.like(res.body, { id: '5f0c-drain-proj', authority: 'proj', source: 'east', target: 'west', actor: 'olivia', reason: 'drain east', barrier: 1, epoch: 2, kind: 'planned_transfer', epoch_before: 1 });
    t.is(res.headers.get('idempotency-key'), '5f0c-drain-proj');
    t.deepEqual(await n.audit.byId('5f0c-drain-proj'), res.body);
  }));

test('a caller cannot set the actor or the barrier through the body', (t) =>
  withNode(async (n) => {
    await establish(n);
    const res = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: { ...transfer, actor: 'mallory', barrier: 0 } });
    t.is(res.status, 400);
    t.is(res.headers.get('content-type'), 'application/problem+json');
  }));

test('without an Idempotency-Key the node assigns one and returns it', (t) =>
  withNode(async (n) => {
    await establish(n);
    n.probe.answer('west', 0);
    const res = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: transfer });
    t.is(res.status, 200);
    const key = res.headers.get('idempotency-key');
    t.truthy(key);
    t.is(res.body.id, key);
  }));

test('transfer requests need a token (401) with the admin write scope (403)', (t) =>
  withNode(async (n) => {
    t.is((await n.call('POST', '/availability/v1/transfers', { body: transfer })).status, 401);
    t.is((await n.call('POST', '/availability/v1/transfers', { token: READER, body: transfer })).status, 403);
    t.is((await n.call('DELETE', '/availability/v1/transfers/proj', { token: READER })).status, 403);
    t.is((await n.call('POST', '/availability/v1/commands', { token: READER, body: {} })).status, 403);
  }));

test('an invalid authority identity answers 400 with the supplier reason', (t) =>
  withNode(async (n) => {
    const res = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: { ...transfer, authority: 'bad\u0007name' } });
    t.is(res.status, 400);
    t.regex(res.body.reason, /control character/);
  }));

test('DELETE of a waiting transfer answers 204 and its POST resolves as 409; a repeat is 204 again', (t) =>
  withNode(async (n) => {
    await establish(n);
    n.probe.hang('west');
    const post = n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k1', body: transfer });
    await n.probe.whenProbed(1);
    const del = await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN });
    t.is(del.status, 204);
    const res = await post;
    t.is(res.status, 409);
    t.is(res.body.code, 'transfer_cancelled');
    t.is((await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN })).status, 204);
    t.is(await n.audit.byId('k1'), undefined);
  }));

test('DELETE of a committed transfer answers 409; of an unknown authority 404', (t) =>
  withNode(async (n) => {
    await establish(n);
    n.probe.answer('west', 0);
    t.is((await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: transfer })).status, 200);
    const committed = await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN });
    t.is(committed.status, 409);
    t.is(committed.body.code, 'transfer_committed');
    t.is((await n.call('DELETE', '/availability/v1/transfers/other', { token: ADMIN })).status, 404);
  }));

test('DELETE answers 503 when the metadata store cannot be read', (t) =>
  withNode(async (n) => {
    n.audit.failWith(new StoreUnavailableError('audit', 'disk gone'));
    t.is((await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN })).status, 503);
  }));

test('GET /availability/v1/transfers/{authority} shows state, barrier, frontier and age while in flight', (t) =>
  withNode(async (n) => {
    await establish(n);
    await n.node.feed.append({ authority: 'proj', operation: 'w1', epoch: 1 });
    await n.node.feed.append({ authority: 'proj', operation: 'w2', epoch: 1 });
    n.probe.answer('west', 1);
    const post = n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k1', body: transfer });
    await n.probe.whenProbed(1);
    const res = await n.call('GET', '/availability/v1/transfers/proj', { token: READER });
    t.is(res.status, 200);
    t.like(res.body, { id: 'k1', state: 'AwaitingCatchUp', barrier: 2, frontier: 1 });
    t.true(typeof res.body.age_ms === 'number');
    n.probe.answer('west', 2);
    t.is((await post).status, 200);
    t.is((await n.call('GET', '/availability/v1/transfers/proj', { token: READER })).status, 404);
  }));

test('a second transfer for an authority in flight answers 409; the same key with another body 422', (t) =>
  withNode(async (n) => {
    await establish(n);
    n.probe.hang('west');
    const post = n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k1', body: transfer });
    await n.probe.whenProbed(1);
    const other = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k2', body: transfer });
    t.is(other.status, 409);
    t.is(other.body.code, 'transfer_in_progress');
    const changed = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k1', body: { ...transfer, reason: 'other' } });
    t.is(changed.status, 422);
    await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN });
    await post;
  }));

test('a target that never catches up answers 504 after the budget and writes no audit', (t) =>
  withNode(
    async (n) => {
      await establish(n);
      n.probe.unreachable('west');
      const res = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k1', body: transfer });
      t.is(res.status, 504);
      t.is(res.body.transfer_id, 'k1');
      t.is(await n.audit.byId('k1'), undefined);
      t.like((await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, { home: 'east', epoch: 1 });
    },
    { transfers: { budgetMs: 200 } },
  ));

test('a failed audit write answers 503 naming the transfer; a retry with the same key answers 200 with the original', (t) =>
  withNode(async (n) => {
    await establish(n);
    n.probe.hang('west');
    const post = n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k1', body: transfer });
    await n.probe.whenProbed(1);
    n.audit.failWith(new StoreUnavailableError('audit', 'disk full'));
    n.probe.answer('west', 0);
    const failed = await post;
    t.is(failed.status, 503);
    t.is(failed.body.transfer_id, 'k1');
    t.regex(failed.body.detail, /k1/);
    n.audit.failWith(undefined);
    const retry = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k1', body: transfer });
    t.is(retry.status, 200);
    t.like(retry.body, { id: 'k1', epoch: 2 });
    t.like((await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, { epoch: 2 });
  }));

test('mode dc answers 503 for transfer requests', (t) =>
  withNode(
    async (n) => {
      t.is((await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: transfer })).status, 503);
      t.is((await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN })).status, 503);
      t.is((await n.call('GET', '/availability/v1/transfers/proj', { token: READER })).status, 503);
      t.is((await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'p', target: 'west' } })).status, 503);
    },
    { mode: 'dc' },
  ));

test('the raw command moves a home only when the tracker calls the source Dead', (t) => {
  const clock = new VirtualClock();
  return withNode(
    async (n) => {
      await establish(n, 'proj', 'west');
      const alive = await n.call('POST', '/availability/v1/commands', {
        token: ADMIN,
        body: { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' },
      });
      t.is(alive.status, 409, JSON.stringify(alive.body));
      t.is(alive.body.code, 'source_not_dead');
      clock.advance(10_000);
      t.is(n.node.tracker.datacenterState('west'), 'Suspect');
      clock.advance(20_000);
      const members = await n.call('GET', '/availability/v1/members', { token: READER });
      t.like(members.body.members.find((m: { member: string }) => m.member === 'west-1'), { state: 'Dead' });
      const moved = await n.call('POST', '/availability/v1/commands', {
        token: ADMIN,
        key: 'fo-1',
        body: { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' },
      });
      t.is(moved.status, 200);
      t.like(moved.body, { id: 'fo-1', authority: 'proj', source: 'west', home: 'east', epoch: 2, replayed: false });
      const again = await n.call('POST', '/availability/v1/commands', {
        token: ADMIN,
        key: 'fo-1',
        body: { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' },
      });
      t.like(again.body, { epoch: 2, replayed: true, commit_index: moved.body.commit_index });
    },
    { clock },
  );
});

test('the raw command refuses a target that is no datacenter of the roster: 400 naming the datacenters, nothing established', (t) =>
  withNode(async (n) => {
    const res = await n.call('POST', '/availability/v1/commands', {
      token: ADMIN,
      body: { type: 'transfer_authority', authority: 'docs', target: 'mars' },
    });
    t.is(res.status, 400, JSON.stringify(res.body));
    t.is(res.headers.get('content-type'), 'application/problem+json');
    t.like(res.body, { status: 400, code: 'invalid_request' });
    t.regex(res.body.detail, /mars is no datacenter of the roster: choose east, west/);
    t.is((await n.call('GET', '/availability/v1/authorities/docs', { token: READER })).status, 404, 'docs has no home');
  }));

test('writes are accepted only at the home under its current epoch; a stale epoch is rejected after a transfer', (t) =>
  withNode(async (n) => {
    await establish(n);
    const write = (epoch: number, authority = 'proj') =>
      n.call('POST', `/availability/v1/authorities/${authority}/writes`, { base: n.publicUrl, token: WRITER, body: { operation: 'op', epoch } });
    const ok = await write(1);
    t.is(ok.status, 200);
    t.like(ok.body, { serial: 1, epoch: 1 });
    n.probe.answer('west', 1);
    t.is((await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: transfer })).status, 200);
    const stale = await write(1);
    t.is(stale.status, 421, 'east is no longer the home');
    t.like(stale.body, { type: 'urn:baton:problem:not-home', authority: 'proj', home: 'west', home_urls: ['http://127.0.0.1:9'] }, 'the refusal names the home and where its members listen');
    await establish(n, 'other', 'east');
    const wrongEpoch = await write(7, 'other');
    t.is(wrongEpoch.status, 409);
    t.is(wrongEpoch.body.code, 'stale_epoch');
    t.is(n.node.feed.serial(), 1, 'rejected writes never reach the feed');
  }));

test('a write to a frozen authority answers 503 problem+json with Retry-After naming the transfer, and gets no serial', (t) =>
  withNode(
    async (n) => {
      await establish(n);
      const write = (operation: string) =>
        n.call('POST', '/availability/v1/authorities/proj/writes', { base: n.publicUrl, token: WRITER, body: { operation, epoch: 1 } });
      t.is((await write('before')).status, 200);
      n.probe.answer('west', 0);
      const post = n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'freeze-1', body: transfer });
      await n.probe.whenProbed(1);
      // Acknowledged while the transfer waits: past the barrier (1), so the freeze has a final serial to reach.
      t.like((await write('while waiting')).body, { serial: 2, epoch: 1 });
      n.probe.answer('west', 1);
      await waitFor(() => n.consensus.view().state.transfers.get('proj')?.frozen === true, 'the source to freeze proj');
      const frozen = await write('during the freeze');
      t.is(frozen.status, 503);
      t.is(frozen.headers.get('content-type'), 'application/problem+json');
      t.truthy(frozen.headers.get('retry-after'), 'a frozen write says when to come back');
      t.like(frozen.body, { status: 503, code: 'authority_frozen' });
      t.regex(frozen.body.detail, /freeze-1/);
      t.is(n.node.feed.serial(), 2, 'the refused write got no serial');
      n.probe.answer('west', 2);
      const committed = await post;
      t.is(committed.status, 200, JSON.stringify(committed.body));
      t.like(committed.body, { id: 'freeze-1', barrier: 2, epoch: 2 });
      t.is((await write('at the old home')).status, 421, 'after the move the old home refuses rather than freezes');
    },
    // A freeze held past its budget is lifted: a budget no busy machine reaches keeps this one frozen.
    { transfers: { freezeBudgetMs: 600_000 } },
  ));

test('the public server serves the change feed and applied serials to authenticated members only, each speaking for itself', (t) =>
  withNode(async (n) => {
    await establish(n);
    await n.node.feed.append({ authority: 'proj', operation: 'w1', epoch: 1 });
    const west = peerHeaders('west-1');
    const feed = await n.call('GET', '/availability/v1/feed?after=0&from=west-1', { base: n.publicUrl, headers: west });
    t.is(feed.status, 200);
    t.like(feed.body, { member: 'east-1', serial: 1, entries: [{ serial: 1, authority: 'proj', operation: 'w1', epoch: 1 }] });
    const applied = await n.call('GET', '/availability/v1/feeds/west-1/applied', { base: n.publicUrl, headers: west });
    t.like(applied.body, { member: 'east-1', origin: 'west-1', serial: 0 });
    const anonymous = await n.call('GET', '/availability/v1/feed', { base: n.publicUrl });
    t.is(anonymous.status, 401);
    t.is(anonymous.headers.get('content-type'), 'application/problem+json');
    t.is((await n.call('GET', '/availability/v1/feed', { base: n.publicUrl, token: ADMIN })).status, 401, 'an admin token is no peer credential');
    t.is((await n.call('GET', '/availability/v1/feed', { base: n.publicUrl, token: PEER })).status, 401, 'nor is the shared peer token');
    t.is((await n.call('GET', '/availability/v1/feeds/west-1/applied', { base: n.publicUrl, headers: peerHeaders('west-1', 'not the secret of west-1, but long') })).status, 401);
    const forged = await n.call('GET', '/availability/v1/feed?after=5&from=north-1&incarnation=x', { base: n.publicUrl, headers: west });
    t.is(forged.status, 403, "a member cannot claim another member's feed progress");
    t.is(forged.body.type, 'urn:baton:problem:peer-impersonation');
  }));

test("GET /availability/v1/authorities/{authority}/audit lists this member's sealed records, newest first", (t) =>
  withNode(async (n) => {
    const established = await establish(n);
    n.probe.answer('west', 0);
    n.probe.answer('east', 0);
    const first = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'move-1', body: transfer });
    t.is(first.status, 200);
    // West has no running member to freeze a planned move back: fail proj over to east.
    const back = await n.call('POST', '/availability/v1/commands', {
      token: ADMIN,
      body: { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' },
    });
    t.is(back.status, 200, JSON.stringify(back.body));
    const second = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'move-2', body: { ...transfer, reason: 'again' } });
    t.is(second.status, 200);
    t.like(second.body, { epoch: 4 });
    await waitFor(() => n.consensus.view().state.pending.size === 0, 'every record stored');
    const listed = await n.call('GET', '/availability/v1/authorities/proj/audit', { token: READER });
    t.is(listed.status, 200);
    // Every move of proj, newest first: the two planned transfers as their POSTs answered them,
    // the failover between them and the establish before all.
    t.deepEqual(
      listed.body.records.map((r: { id: string; kind: string }) => [r.id, r.kind]),
      [
        ['move-2', 'planned_transfer'],
        [back.body.audit_id, 'failover_transfer'],
        ['move-1', 'planned_transfer'],
        [`${established.commit_index}-0`, 'authority_established'],
      ],
    );
    t.deepEqual(listed.body.records[0], second.body);
    t.deepEqual(listed.body.records[2], first.body);
    t.is(listed.body.next, null);
    // Pages of one: `next` is the `before` of the older page, null once nothing older is left.
    const limited = await n.call('GET', '/availability/v1/authorities/proj/audit?limit=1', { token: READER });
    t.deepEqual(limited.body, { authority: 'proj', records: [second.body], next: second.body.commit_index });
    const older = await n.call('GET', `/availability/v1/authorities/proj/audit?limit=1&before=${limited.body.next}`, { token: READER });
    t.deepEqual(older.body, { authority: 'proj', records: [listed.body.records[1]], next: back.body.commit_index });
    const oldest = await n.call('GET', `/availability/v1/authorities/proj/audit?limit=1&before=${first.body.commit_index}`, { token: READER });
    t.deepEqual(oldest.body, { authority: 'proj', records: [listed.body.records[3]], next: null });
    const none = await n.call('GET', `/availability/v1/authorities/proj/audit?before=${established.commit_index}`, { token: READER });
    t.deepEqual(none.body, { authority: 'proj', records: [], next: null });
    t.is((await n.call('GET', '/availability/v1/authorities/proj/audit?limit=0', { token: READER })).status, 400);
    for (const query of ['limit=5000', 'limit=two', 'page=2', 'after=x', 'before=-1', 'before=1e3', 'before=']) {
      const refused = await n.call('GET', `/availability/v1/authorities/proj/audit?${query}`, { token: READER });
      t.is(refused.status, 400, `audit?${query}`);
      t.is(refused.headers.get('content-type'), 'application/problem+json');
      t.truthy(refused.body.invalid_fields?.length, `audit?${query} names the field`);
    }
    t.is((await n.call('GET', '/availability/v1/authorities/proj/audit')).status, 401);
    n.audit.failWith(new StoreUnavailableError('audit', 'disk gone'));
    t.is((await n.call('GET', '/availability/v1/authorities/proj/audit', { token: READER })).status, 503);
  }, { tracker: { suspectAfterMs: 1, deadAfterMs: 2 } }));

test('GET /availability/v1/authorities lists authorities by id in bounded pages with a cursor', (t) =>
  withNode(async (n) => {
    const names = ['proj', 'lib', 'constructor', 'app', 'zeta'];
    for (const name of names) await establish(n, name, name === 'lib' ? 'west' : 'east');
    const seen: { authority: string; home: string; epoch: number; catch_up: unknown }[] = [];
    let after: string | null = '';
    let pages = 0;
    while (after !== null) {
      const res = await n.call('GET', `/availability/v1/authorities?limit=2&after=${encodeURIComponent(after)}`, { token: READER });
      t.is(res.status, 200);
      t.true(res.body.authorities.length <= 2);
      t.is(res.body.total, 5);
      seen.push(...res.body.authorities);
      after = res.body.next;
      pages++;
    }
    t.is(pages, 3);
    t.deepEqual(seen.map((a) => a.authority), [...names].sort());
    t.deepEqual(seen.find((a) => a.authority === 'lib'), { authority: 'lib', home: 'west', epoch: 1, catch_up: null });
    t.is((await n.call('GET', '/availability/v1/authorities?limit=0', { token: READER })).status, 400);
    t.is((await n.call('GET', '/availability/v1/authorities?limit=5000', { token: READER })).status, 400);
    t.is((await n.call('GET', '/availability/v1/authorities')).status, 401);
  }));
