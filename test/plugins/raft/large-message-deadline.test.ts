import test from 'ava';
import { request as httpRequest } from 'node:http';
import type { Clock } from '../../../framework/contracts/clock.js';
import { SystemClock } from '../../../framework/kernel/system-clock.js';
import { VirtualClock } from '../../../framework/testing/sim/virtual-clock.js';
import {
  defaultLargeMessageDeadlineMs,
  HttpPeerTransport,
  RAFT_HTTP_BASE,
} from '../../../plugins/raft/transport-http.js';
import { eventually } from '../../hosts/eventually.js';
import { peerHeaders, testPeerAuthenticator } from '../../support/peer-auth.js';
import { listen } from './support/http-cluster.js';
import { MemoryLogger } from './support/silent-logger.js';

/** Member b, receiving on a loopback server; a and c are its peers (d is known to its authenticator only). */
async function receiver(options: { clock: Clock; largeMessageDeadlineMs: number; maxLargeMessagesInFlight?: number }) {
  const server = await listen();
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
  server.mount(transport.router());
  /** A whole large message from `from`, as its transport would post it; resolves to the answer. */
  const postLarge = (from: string, body: string) =>
    fetch(`${server.url}${RAFT_HTTP_BASE}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...peerHeaders(from) },
      body: JSON.stringify({ cluster: 'c', from, messages: [{ channel: 'raft', body }] }),
    });
  const close = async () => {
    await transport.stop();
    server.server.closeAllConnections();
    await new Promise((resolve) => server.server.close(resolve));
  };
  return { url: server.url, transport, delivered, postLarge, close };
}

/**
 * A large-message POST from `from` with a valid credential that sends its headers and the start
 * of its body, then nothing more: what a member that stalls its snapshot does.
 */
function stalledLarge(url: string, from: string) {
  const seen: { status?: number; type?: string; body?: { type?: string }; closed: boolean } = { closed: false };
  const req = httpRequest(`${url}${RAFT_HTTP_BASE}/messages`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': '100000', ...peerHeaders(from) },
  });
  req.on('response', (res) => {
    seen.status = res.statusCode;
    seen.type = res.headers['content-type'];
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => (seen.body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string }));
  });
  // The server cuts the connection once it has answered: the rest of the body never goes.
  req.on('error', () => undefined);
  req.on('close', () => (seen.closed = true));
  req.write(`{"cluster":"c","from":"${from}","messages":[{"channel":"raft","body":"`);
  return { seen, abort: () => req.destroy() };
}

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
  t.is(defaultLargeMessageDeadlineMs(64 * 1024 * 1024), 32_000);
  t.is(defaultLargeMessageDeadlineMs(1024), 5_000, 'never below the floor for small bounds');
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
