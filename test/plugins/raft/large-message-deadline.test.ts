import test from 'ava';
import type { Clock } from '@baton/contracts/internal/clock.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { defaultBodyDeadlineMs, HttpPeerTransport } from '@baton/plugin-raft/internal/transport-http.js';
import { eventually } from '../../hosts/eventually.js';
import { testPeerAuthenticator } from '../../support/peer-auth.js';
import { MemoryLogger } from './support/silent-logger.js';
import { serveRoutes, stalledPost } from './support/stalled-peer.js';

/** Member b, receiving on a loopback server; a and c are its peers (d is known to its authenticator only). */
async function receiver(options: { clock: Clock; largeMessageDeadlineMs: number; maxLargeMessagesInFlight?: number }) {
  const transport = new HttpPeerTransport({
    self: 'b',
    peers: { a: 'http://127.0.0.1:9', c: 'http://127.0.0.1:9' },
    cluster: 'c',
    clock: options.clock,
    logger: new MemoryLogger(),
    auth: testPeerAuthenticator('b', ['a', 'b', 'c', 'd']),
    largeMessageDeadlineMs: options.largeMessageDeadlineMs,
    maxLargeMessagesInFlight: options.maxLargeMessagesInFlight,
  });
  const delivered: unknown[] = [];
  transport.listen('raft', { onMessage: (from, m) => delivered.push(`${from}:${String(m.body)}`) });
  return { transport, delivered, ...(await serveRoutes(transport)) };
}

/** A large-message POST from `from` that stalls its body (see stalledPost). */
const stalledLarge = (url: string, from: string) => stalledPost(url, 'messages', from);

test('a peer that stalls its large message holds only its own slot, and only until the deadline: another peer\'s snapshot is read meanwhile', async (t) => {
  // Virtual time: the deadline passes only when the test says so, so "meanwhile" is certain.
  const clock = new VirtualClock();
  const b = await receiver({ clock, largeMessageDeadlineMs: 1_000 });
  const stalled = stalledLarge(b.url, 'a');
  try {
    // The deadline is armed once a's body is being read, holding a's slot.
    await eventually(() => clock.nextDue() !== undefined, "a's stalled body to be admitted");

    const fromC = await b.postLarge('c', 'snapshot of c');
    t.is(fromC.status, 204, 'a large message from another peer is read at once');
    const second = await b.postLarge('a', 'another from a');
    t.is(second.status, 503, 'one large message at a time per sender');
    t.is(second.headers.get('content-type'), 'application/problem+json');
    t.is(stalled.seen.status, undefined, 'a is still stalled, not yet past its deadline');
    t.deepEqual(b.delivered, ['c:snapshot of c']);

    clock.advance(1_000);
    await eventually(() => stalled.seen.body !== undefined && stalled.seen.closed, "a's stalled request to be answered and its connection closed");
    t.is(stalled.seen.status, 408);
    t.is(stalled.seen.type, 'application/problem+json');
    t.is(stalled.seen.body?.type, 'urn:baton:problem:body-timeout');
    t.is(b.transport.stats.rejectedSlowBody, 1);
    t.is(b.transport.stats.rejectedBusy, 1);

    // a's slot is free again.
    t.is((await b.postLarge('a', 'snapshot of a')).status, 204);
    t.deepEqual(b.delivered, ['c:snapshot of c', 'a:snapshot of a']);
  } finally {
    stalled.abort();
    await b.close();
  }
});

test('a stalled large message is ended by its deadline on the real clock too', async (t) => {
  const b = await receiver({ clock: new SystemClock(), largeMessageDeadlineMs: 200 });
  const stalled = stalledLarge(b.url, 'a');
  try {
    await eventually(() => stalled.seen.body !== undefined && stalled.seen.closed, "a's stalled request to be ended by its deadline");
    t.is(stalled.seen.status, 408);
    t.is(b.transport.stats.rejectedSlowBody, 1);
    t.is((await b.postLarge('a', 'snapshot of a')).status, 204);
  } finally {
    stalled.abort();
    await b.close();
  }
});

test('the global bound on large messages still holds; a member that is no peer takes no slot', async (t) => {
  const clock = new VirtualClock();
  const b = await receiver({ clock, largeMessageDeadlineMs: 1_000, maxLargeMessagesInFlight: 1 });
  const stalled = stalledLarge(b.url, 'a');
  try {
    await eventually(() => clock.nextDue() !== undefined, "a's stalled body to be admitted");
    // d holds a valid credential but is not among b's peers: refused on its headers.
    t.is((await b.postLarge('d', 'from d')).status, 403);
    t.is(b.transport.stats.rejectedForeign, 1);
    // With one slot in all, the stalled sender holds it until the deadline.
    t.is((await b.postLarge('c', 'snapshot of c')).status, 503);
    clock.advance(1_000);
    await eventually(() => stalled.seen.closed, "a's stalled request to be ended");
    t.is(stalled.seen.status, 408);
    t.is((await b.postLarge('c', 'snapshot of c')).status, 204);
    t.deepEqual(b.delivered, ['c:snapshot of c']);
  } finally {
    stalled.abort();
    await b.close();
  }
});

test('the default deadline lets a whole large message arrive at a slow but honest rate', (t) => {
  t.is(defaultBodyDeadlineMs(64 * 1024 * 1024), 32_000);
  t.is(defaultBodyDeadlineMs(1024), 5_000, 'never below the floor for small bounds');
  const transport = () =>
    new HttpPeerTransport({
      self: 'b',
      peers: {},
      cluster: 'c',
      clock: new SystemClock(),
      logger: new MemoryLogger(),
      auth: testPeerAuthenticator('b', ['b']),
      largeMessageDeadlineMs: 0,
    });
  t.throws(transport, { instanceOf: RangeError, message: /largeMessageDeadlineMs/ });
});
