import { createServer } from 'node:http';
import test from 'ava';
import { HttpFrontierProbe } from '@baton/authority-transfer/internal/http-frontier-probe.js';
import { Roster } from '@baton/authority-transfer/internal/roster.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { peerHeaders } from '../../support/peer-auth.js';
import { startNode, waitFor } from './node-harness.js';

const clock = new SystemClock();
const EAST = { member: 'east-1', incarnation: 'inc-east' };
const entries = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ serial: from + i, authority: 'a', operation: `op${from + i}`, epoch: 1 }));
const ROSTER = {
  east: { members: { 'east-1': { public: 'http://127.0.0.1:9' } } },
  west: { members: { 'west-1': { public: 'http://127.0.0.1:9' } } },
  north: { members: { 'north-1': { public: 'http://127.0.0.1:9' } } },
};

/** West holding east's feed through 3; the route is asked as east-1 (its peer credential). */
async function westHolding3() {
  const west = await startNode({ mode: 'dc', self: 'west-1', roster: ROSTER });
  await west.node.replicas.reset('east-1', EAST.incarnation);
  await west.node.replicas.apply('east-1', EAST.incarnation, entries(1, 3));
  const applied = (query: string, options: { as?: string; signal?: AbortSignal } = {}) =>
    fetch(`${west.publicUrl}/availability/v1/feeds/east-1/applied${query}`, { headers: peerHeaders(options.as ?? 'east-1'), signal: options.signal });
  const probe = new HttpFrontierProbe(new Roster({ west: { members: { 'west-1': { public: west.publicUrl } } } }), clock, { headers: peerHeaders('east-1') });
  return { west, applied, probe };
}

test('a waiting probe is answered on the apply that reaches its serial', async (t) => {
  const { west, probe } = await westHolding3();
  try {
    const reading = probe.probe('west', EAST, { signal: new AbortController().signal, timeoutMs: 20_000, waitFor: { serial: 5, waitMs: 10_000 } });
    await waitFor(() => west.node.appliedWaits.size === 1, 'the probe to park');
    await west.node.replicas.apply('east-1', EAST.incarnation, entries(4, 4));
    t.is(west.node.appliedWaits.size, 1, 'serial 4 does not answer a wait for 5');
    await west.node.replicas.apply('east-1', EAST.incarnation, entries(5, 5));
    t.like(await reading, { serial: 5, waited: true });
    t.is(west.node.appliedWaits.size, 0);
  } finally {
    await west.host.stop();
  }
});

test('a waiting probe whose wait runs out is answered with the frontier the member holds', async (t) => {
  const { west, applied, probe } = await westHolding3();
  try {
    const response = await applied(`?incarnation=${EAST.incarnation}&atLeast=9&waitMs=20`);
    t.is(response.status, 200);
    t.like(await response.json(), { member: 'west-1', origin: 'east-1', incarnation: EAST.incarnation, serial: 3, wait: { atLeast: 9, reached: false } });
    t.like(await probe.probe('west', EAST, { signal: new AbortController().signal, timeoutMs: 5_000, waitFor: { serial: 9, waitMs: 20 } }), { serial: 3, waited: true });
    const plain = await applied('');
    t.false('wait' in ((await plain.json()) as object), 'a probe that asks for no wait is answered at once, as before');
  } finally {
    await west.host.stop();
  }
});

test('a wait out of bounds or half asked is refused with a problem, before anything parks', async (t) => {
  const { west, applied } = await westHolding3();
  try {
    const cases: [string, number][] = [
      [`?incarnation=${EAST.incarnation}&atLeast=9&waitMs=10001`, 400],
      [`?incarnation=${EAST.incarnation}&atLeast=9&waitMs=0`, 400],
      [`?incarnation=${EAST.incarnation}&atLeast=-1&waitMs=10`, 400],
      [`?incarnation=${EAST.incarnation}&atLeast=1.5&waitMs=10`, 400],
      [`?incarnation=${EAST.incarnation}&atLeast=9&waitMs=1e3`, 400],
      [`?incarnation=${EAST.incarnation}&atLeast=99999999999999999999&waitMs=10`, 400],
      [`?incarnation=${'x'.repeat(201)}&atLeast=9&waitMs=10`, 400],
      [`?incarnation=${EAST.incarnation}&atLeast=9`, 422],
      [`?atLeast=9&waitMs=10`, 422],
      [`?incarnation=${EAST.incarnation}&waitMs=10`, 422],
    ];
    for (const [query, status] of cases) {
      const response = await applied(query);
      t.is(response.status, status, query);
      t.is(response.headers.get('content-type'), 'application/problem+json', query);
      t.is(((await response.json()) as { status: number }).status, status, query);
    }
    t.is(west.node.appliedWaits.size, 0);
    const unauthenticated = await fetch(`${west.publicUrl}/availability/v1/feeds/east-1/applied?incarnation=${EAST.incarnation}&atLeast=9&waitMs=10`);
    t.is(unauthenticated.status, 401, 'the waiting route authenticates peers like the plain one');
  } finally {
    await west.host.stop();
  }
});

test('a prober hanging up ends its parked wait and frees its place', async (t) => {
  const { west, applied } = await westHolding3();
  try {
    const controller = new AbortController();
    const pending = applied(`?incarnation=${EAST.incarnation}&atLeast=9&waitMs=10000`, { signal: controller.signal });
    await waitFor(() => west.node.appliedWaits.size === 1, 'the probe to park');
    controller.abort(new Error('cancelled'));
    await t.throwsAsync(pending, { message: 'cancelled' });
    await waitFor(() => west.node.appliedWaits.size === 0, 'the member to free the place');
    t.is(west.node.appliedWaits.size, 0);
  } finally {
    await west.host.stop();
  }
});

test('parked waits are bounded per requester (429 with Retry-After), and a stopping member answers the parked ones', async (t) => {
  const { west, applied } = await westHolding3();
  const limit = west.node.appliedWaits.limits.perRequester;
  const query = `?incarnation=${EAST.incarnation}&atLeast=9&waitMs=10000`;
  const parked: Promise<Response>[] = [];
  try {
    for (let i = 0; i < limit; i++) parked.push(applied(query));
    await waitFor(() => west.node.appliedWaits.size === limit, `${limit} probes to park`);
    const refused = await applied(query);
    t.is(refused.status, 429);
    t.is(refused.headers.get('content-type'), 'application/problem+json');
    t.truthy(refused.headers.get('retry-after'));
    t.is(west.node.appliedWaits.size, limit, 'the refused wait parked nothing');
    const other = applied(query, { as: 'north-1' });
    await waitFor(() => west.node.appliedWaits.size === limit + 1, 'another requester to park');
    parked.push(other);
  } finally {
    await west.host.stop();
  }
  const answers = await Promise.all(parked);
  t.true(answers.every((r) => r.status === 200), 'the parked waits were answered when the member stopped');
  t.like(await answers[0].json(), { serial: 3, wait: { atLeast: 9, reached: false } });
});

test('a member that does not know waiting probes answers at once, and the reading says it did not wait', async (t) => {
  const old = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ member: 'west-1', origin: 'east-1', incarnation: EAST.incarnation, serial: 3, storage: 's1' }));
  });
  await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(old.address() as { port: number }).port}`;
    const probe = new HttpFrontierProbe(new Roster({ west: { members: { 'west-1': { public: url } } } }), clock, { headers: peerHeaders('east-1') });
    const reading = await probe.probe('west', EAST, { signal: new AbortController().signal, timeoutMs: 5_000, waitFor: { serial: 9, waitMs: 5_000 } });
    t.deepEqual(reading, { serial: 3, replica: 'west-1=s1' });
  } finally {
    old.close();
  }
});
