import test from 'ava';
import type { Clock } from '@baton/contracts/internal/clock.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { DEFAULT_MAX_MESSAGE_BYTES, defaultBodyDeadlineMs, HttpPeerTransport } from '@baton/plugin-raft/internal/transport-http.js';
import { eventually } from '../../hosts/eventually.js';
import { testPeerAuthenticator } from '../../support/peer-auth.js';
import { MemoryLogger } from './support/silent-logger.js';
import { CountingClock, serveRoutes, stalledPost } from './support/stalled-peer.js';

/** Member b, answering peer requests on a loopback server; a and c are its peers (d is known to its authenticator only). */
async function receiver(options: { clock: Clock; requestDeadlineMs?: number; maxConcurrentRequests?: number }) {
  const transport = new HttpPeerTransport({
    self: 'b',
    peers: { a: 'http://127.0.0.1:9', c: 'http://127.0.0.1:9' },
    cluster: 'c',
    clock: options.clock,
    logger: new MemoryLogger(),
    auth: testPeerAuthenticator('b', ['a', 'b', 'c', 'd']),
    requestDeadlineMs: options.requestDeadlineMs,
    maxConcurrentRequests: options.maxConcurrentRequests,
  });
  transport.listen('raft', {
    onMessage: () => undefined,
    onRequest: async (from, m) => ({ channel: 'raft', body: `${from} asked ${String(m.body)}` }),
  });
  return { transport, ...(await serveRoutes(transport)) };
}

/** A forwarded-proposal POST from `from` that stalls its body (see stalledPost). */
const stalledRequest = (url: string, from: string) => stalledPost(url, 'requests', from);

test("a peer request whose body stalls is ended by its deadline with 408 and its slot freed; another peer's request is answered meanwhile", async (t) => {
  // Virtual time: the deadline passes only when the test says so, so "meanwhile" is certain.
  const clock = new CountingClock();
  const b = await receiver({ clock, requestDeadlineMs: 1_000, maxConcurrentRequests: 2 });
  const first = stalledRequest(b.url, 'a');
  let second: ReturnType<typeof stalledRequest> | undefined;
  try {
    // Each body being read arms its deadline: a's stalled body holds one of the two slots.
    await eventually(() => clock.armed === 1, "a's stalled request body to be admitted");
    const fromC = await b.postRequest('c', 'propose x');
    t.is(fromC.status, 200, "another peer's request is answered while a stalls");
    t.deepEqual(await fromC.json(), { channel: 'raft', body: 'c asked propose x' });

    second = stalledRequest(b.url, 'a');
    await eventually(() => clock.armed === 3, "a's second stalled request body to be admitted");
    const refused = await b.postRequest('c', 'propose y');
    t.is(refused.status, 503, 'both slots are held by stalled bodies');
    t.is(refused.headers.get('content-type'), 'application/problem+json');
    t.is(first.seen.status, undefined, 'not yet past its deadline');

    clock.advance(1_000);
    await eventually(
      () => [first, second!].every((s) => s.seen.body !== undefined && s.seen.closed),
      "a's stalled requests to be answered and their connections closed",
    );
    for (const stalled of [first, second]) {
      t.is(stalled.seen.status, 408);
      t.is(stalled.seen.type, 'application/problem+json');
      t.is(stalled.seen.body?.type, 'urn:baton:problem:body-timeout');
      t.is(stalled.seen.body?.deadline_ms, 1_000);
    }
    t.is(b.transport.stats.rejectedSlowBody, 2);
    t.is(b.transport.stats.rejectedBusy, 1);

    // Both slots are free again.
    t.is((await b.postRequest('c', 'propose y')).status, 200);
    t.is((await b.postRequest('a', 'propose z')).status, 200);
  } finally {
    first.abort();
    second?.abort();
    await b.close();
  }
});

test('a stalled peer request is ended by its deadline on the real clock too', async (t) => {
  const b = await receiver({ clock: new SystemClock(), requestDeadlineMs: 200 });
  const stalled = stalledRequest(b.url, 'a');
  try {
    await eventually(() => stalled.seen.body !== undefined && stalled.seen.closed, "a's stalled request to be ended by its deadline");
    t.is(stalled.seen.status, 408);
    t.is(b.transport.stats.rejectedSlowBody, 1);
    t.is((await b.postRequest('a', 'propose x')).status, 200);
  } finally {
    stalled.abort();
    await b.close();
  }
});

test('a member that is no peer takes no request slot: refused on its headers', async (t) => {
  const clock = new CountingClock();
  const b = await receiver({ clock, maxConcurrentRequests: 1 });
  const stalled = stalledRequest(b.url, 'd');
  try {
    await eventually(() => stalled.seen.body !== undefined, "d's request to be refused");
    t.is(stalled.seen.status, 403);
    t.is(clock.armed, 0, 'no body of it was read');
    t.is(b.transport.stats.rejectedForeign, 1);
    t.is((await b.postRequest('c', 'propose x')).status, 200, 'the one slot is free');
  } finally {
    stalled.abort();
    await b.close();
  }
});

test('by default a peer request body has 5 s: the floor, since 4 MiB at a slow but honest rate takes 2 s', async (t) => {
  t.is(defaultBodyDeadlineMs(DEFAULT_MAX_MESSAGE_BYTES), 5_000);
  const clock = new VirtualClock();
  const b = await receiver({ clock });
  const stalled = stalledRequest(b.url, 'a');
  try {
    await eventually(() => clock.nextDue() !== undefined, "a's stalled request body to be admitted");
    t.is(clock.nextDue()! - clock.now(), 5_000);
    clock.advance(5_000);
    await eventually(() => stalled.seen.closed, "a's stalled request to be ended");
    t.is(stalled.seen.status, 408);
    t.is(stalled.seen.body?.deadline_ms, 5_000);
  } finally {
    stalled.abort();
    await b.close();
  }
  const transport = () =>
    new HttpPeerTransport({
      self: 'b',
      peers: {},
      cluster: 'c',
      clock: new SystemClock(),
      logger: new MemoryLogger(),
      auth: testPeerAuthenticator('b', ['b']),
      requestDeadlineMs: Number.NaN,
    });
  t.throws(transport, { instanceOf: RangeError, message: /requestDeadlineMs/ });
});
