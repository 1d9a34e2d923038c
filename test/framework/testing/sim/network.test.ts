import test from 'ava';
import {
  PeerUnreachableError,
  type PeerMessage,
} from '@baton/contracts/internal/peer-transport.js';
import { SimNetwork, type LinkConditions } from '@baton/testing/internal/sim/network.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { VirtualClock, flushMicrotasks } from '@baton/conformance/internal/virtual-clock.js';

function setup(defaults: Partial<LinkConditions> = {}, seed = 7) {
  const clock = new VirtualClock();
  const network = new SimNetwork(clock, new SeededRng(seed), defaults);
  const inbox = new Map<string, Array<{ from: string; body: unknown }>>();
  const member = (id: string) => {
    const transport = network.transport(id);
    inbox.set(id, []);
    transport.listen('test', {
      onMessage: (from, message) => inbox.get(id)!.push({ from, body: message.body }),
    });
    return transport;
  };
  return { clock, network, inbox, member };
}

test('a message arrives after its delay, not before, as a copy of its body', (t) => {
  const { clock, inbox, member } = setup({ minDelayMs: 5, maxDelayMs: 5 });
  const a = member('a');
  member('b');
  const body = { n: 1 };
  a.send('b', { channel: 'test', body });
  body.n = 2;
  clock.advance(4);
  t.deepEqual(inbox.get('b'), []);
  clock.advance(1);
  t.deepEqual(inbox.get('b'), [{ from: 'a', body: { n: 1 } }]);
});

test('random delays reorder messages, identically for the same seed', (t) => {
  const run = (seed: number) => {
    const { clock, inbox, member } = setup({ minDelayMs: 1, maxDelayMs: 50 }, seed);
    const a = member('a');
    member('b');
    for (let i = 0; i < 20; i++) a.send('b', { channel: 'test', body: i });
    clock.advance(100);
    return inbox.get('b')!.map((m) => m.body as number);
  };
  const order = run(1);
  t.is(order.length, 20);
  t.notDeepEqual(
    order,
    [...order].sort((x, y) => x - y),
    'some messages overtook others',
  );
  t.deepEqual(run(1), order);
  t.notDeepEqual(run(2), order);
});

test('drop and duplicate probabilities act at about their rate and are counted', (t) => {
  const { clock, network, inbox, member } = setup({
    dropProbability: 0.3,
    duplicateProbability: 0.2,
  });
  const a = member('a');
  member('b');
  for (let i = 0; i < 2000; i++) a.send('b', { channel: 'test', body: i });
  clock.advance(10);
  const stats = network.stats();
  t.true(
    stats.dropped.random > 450 && stats.dropped.random < 750,
    `dropped ${stats.dropped.random}`,
  );
  t.true(stats.duplicated > 200 && stats.duplicated < 360, `duplicated ${stats.duplicated}`);
  t.is(inbox.get('b')!.length, 2000 - stats.dropped.random + stats.duplicated);
  t.is(stats.delivered, inbox.get('b')!.length);
});

test('a partition blocks both ways until heal, also for messages already in flight', (t) => {
  const { clock, network, inbox, member } = setup({ minDelayMs: 10, maxDelayMs: 10 });
  const a = member('a');
  const b = member('b');
  const c = member('c');
  a.send('b', { channel: 'test', body: 'in flight' });
  network.partition(['a'], ['b', 'c']);
  b.send('a', { channel: 'test', body: 'b->a' });
  c.send('b', { channel: 'test', body: 'c->b' });
  clock.advance(20);
  t.deepEqual(inbox.get('a'), []);
  t.deepEqual(inbox.get('b'), [{ from: 'c', body: 'c->b' }]);
  t.is(network.stats().dropped.partition, 2);
  network.heal();
  a.send('b', { channel: 'test', body: 'after heal' });
  clock.advance(10);
  t.deepEqual(inbox.get('b')!.at(-1), { from: 'a', body: 'after heal' });
});

test('cut is one way; isolate cuts a member off from everyone', (t) => {
  const { clock, network, inbox, member } = setup();
  const a = member('a');
  const b = member('b');
  network.cut('a', 'b');
  a.send('b', { channel: 'test', body: 1 });
  b.send('a', { channel: 'test', body: 2 });
  clock.advance(5);
  t.deepEqual(inbox.get('b'), []);
  t.deepEqual(inbox.get('a'), [{ from: 'b', body: 2 }]);
  network.heal();
  network.isolate('b');
  a.send('b', { channel: 'test', body: 3 });
  b.send('a', { channel: 'test', body: 4 });
  clock.advance(5);
  t.is(inbox.get('a')!.length, 1);
  t.is(inbox.get('b')!.length, 0);
});

test('a crashed member hears nothing and its old transport stays dead after restart', (t) => {
  const { clock, network, inbox, member } = setup();
  const a = member('a');
  const oldB = member('b');
  network.crash('b');
  a.send('b', { channel: 'test', body: 'while down' });
  oldB.send('a', { channel: 'test', body: 'from the dead' });
  clock.advance(5);
  t.deepEqual(inbox.get('b'), []);
  t.deepEqual(inbox.get('a'), []);
  network.restart('b');
  const newB = member('b');
  t.not(newB, oldB);
  oldB.send('a', { channel: 'test', body: 'old incarnation' });
  newB.send('a', { channel: 'test', body: 'new incarnation' });
  a.send('b', { channel: 'test', body: 'after restart' });
  clock.advance(5);
  t.deepEqual(inbox.get('a'), [{ from: 'b', body: 'new incarnation' }]);
  t.deepEqual(inbox.get('b'), [{ from: 'a', body: 'after restart' }]);
  t.is(network.stats().dropped.sender_down, 2);
});

test('a paused member receives what arrived meanwhile, in order, on resume', (t) => {
  const { clock, network, inbox, member } = setup({ minDelayMs: 1, maxDelayMs: 1 });
  const a = member('a');
  member('b');
  network.pause('b');
  a.send('b', { channel: 'test', body: 1 });
  a.send('b', { channel: 'test', body: 2 });
  clock.advance(10);
  t.deepEqual(inbox.get('b'), []);
  network.resume('b');
  t.deepEqual(
    inbox.get('b')!.map((m) => m.body),
    [1, 2],
  );
});

test('request gets the response through the network', async (t) => {
  const { clock, network } = setup({ minDelayMs: 3, maxDelayMs: 3 });
  const a = network.transport('a');
  const b = network.transport('b');
  b.listen('rpc', {
    onMessage: () => {},
    onRequest: async (from, message) => ({ channel: 'rpc', body: { echo: message.body, from } }),
  });
  const answer = a.request('b', { channel: 'rpc', body: 'hi' }, { timeoutMs: 100 });
  let settled: PeerMessage | undefined;
  void answer.then((m) => (settled = m));
  await clock.advanceAsync(5);
  t.is(settled, undefined, 'the response is still on its way back');
  await clock.advanceAsync(1);
  t.deepEqual(await answer, { channel: 'rpc', body: { echo: 'hi', from: 'a' } });
});

test('request times out through the clock when the peer is partitioned away', async (t) => {
  const { clock, network } = setup();
  const a = network.transport('a');
  network
    .transport('b')
    .listen('rpc', { onMessage: () => {}, onRequest: async () => ({ channel: 'rpc', body: 1 }) });
  network.partition(['a'], ['b']);
  const answer = a.request('b', { channel: 'rpc', body: null }, { timeoutMs: 50 });
  await clock.advanceAsync(50);
  const error = await t.throwsAsync(answer, { instanceOf: PeerUnreachableError });
  t.regex(error!.message, /member b did not answer: no answer within 50 ms/);
  t.is(network.stats().requestTimeouts, 1);
});

test('a request to a member without a request handler, or whose handler fails, is refused', async (t) => {
  const { clock, network } = setup();
  const a = network.transport('a');
  const b = network.transport('b');
  b.listen('rpc', {
    onMessage: () => {},
    onRequest: async () => {
      throw new Error('boom');
    },
  });
  const noHandler = a.request('b', { channel: 'other', body: null }, { timeoutMs: 50 });
  const failing = a.request('b', { channel: 'rpc', body: null }, { timeoutMs: 50 });
  await clock.advanceAsync(10);
  t.regex(
    (await t.throwsAsync(noHandler, { instanceOf: PeerUnreachableError }))!.message,
    /serves no requests on channel "other"/,
  );
  t.regex(
    (await t.throwsAsync(failing, { instanceOf: PeerUnreachableError }))!.message,
    /handler failed: boom/,
  );
});

test('an aborted request fails at once; a crashed requester never hears back', async (t) => {
  const { clock, network } = setup({ minDelayMs: 5, maxDelayMs: 5 });
  const a = network.transport('a');
  network
    .transport('b')
    .listen('rpc', { onMessage: () => {}, onRequest: async () => ({ channel: 'rpc', body: 1 }) });
  const controller = new AbortController();
  const aborted = a.request(
    'b',
    { channel: 'rpc', body: null },
    { timeoutMs: 50, signal: controller.signal },
  );
  controller.abort();
  await t.throwsAsync(aborted, { instanceOf: PeerUnreachableError, message: /aborted/ });

  let settled = false;
  void a
    .request('b', { channel: 'rpc', body: null }, { timeoutMs: 50 })
    .finally(() => (settled = true));
  network.crash('a');
  await clock.advanceAsync(100);
  t.false(settled);
  t.is(clock.nextDue(), undefined, 'the dead request left no timer behind');
});

test('a throwing message handler is counted and does not stop delivery', (t) => {
  const { clock, network } = setup();
  const a = network.transport('a');
  const got: unknown[] = [];
  network.transport('b').listen('test', {
    onMessage: (_from, m) => {
      got.push(m.body);
      if (m.body === 1) throw new Error('handler bug');
    },
  });
  a.send('b', { channel: 'test', body: 1 });
  a.send('b', { channel: 'test', body: 2 });
  clock.advance(5);
  t.deepEqual(got, [1, 2]);
  t.is(network.stats().handlerErrors, 1);
});

test('bad configuration and bodies are refused with a clear error', (t) => {
  const { network } = setup();
  t.throws(() => network.setDefaults({ dropProbability: 2 }), {
    message: /dropProbability must be within \[0, 1\]/,
  });
  t.throws(() => network.setLink('a', 'b', { minDelayMs: 5, maxDelayMs: 1 }), {
    message: /minDelayMs <= maxDelayMs/,
  });
  t.throws(() => network.transport('a').send('b', { channel: 'x', body: undefined }), {
    message: /not JSON-serialisable/,
  });
  network.transport('b').listen('x', { onMessage: () => {} });
  t.throws(() => network.transport('b').listen('x', { onMessage: () => {} }), {
    message: /already listens on channel "x"/,
  });
});

test('per-link conditions override the defaults, one way or both', async (t) => {
  const { clock, network, inbox, member } = setup({ minDelayMs: 1, maxDelayMs: 1 });
  const a = member('a');
  const b = member('b');
  network.setLink('a', 'b', { dropProbability: 1 }, { oneWay: true });
  a.send('b', { channel: 'test', body: 'lost' });
  b.send('a', { channel: 'test', body: 'kept' });
  clock.advance(2);
  await flushMicrotasks();
  t.deepEqual(inbox.get('b'), []);
  t.deepEqual(inbox.get('a'), [{ from: 'b', body: 'kept' }]);
});

test('every send, delivery and drop is reported to observers, with the time and why', (t) => {
  const { clock, network, member } = setup({ minDelayMs: 2, maxDelayMs: 2 });
  const a = member('a');
  member('b');
  const events: string[] = [];
  const stop = network.onEvent((e) =>
    events.push(
      `${e.at - 1_700_000_000_000} ${e.kind}${e.kind === 'dropped' ? `(${e.reason})` : ''} ${e.from}->${e.to} ${e.what}`,
    ),
  );
  a.send('b', { channel: 'test', body: 1 });
  network.cut('a', 'b');
  a.send('b', { channel: 'test', body: 2 });
  clock.advance(2);
  stop();
  a.send('b', { channel: 'test', body: 3 });
  t.deepEqual(events, [
    '0 sent a->b message test',
    '0 sent a->b message test',
    '0 dropped(partition) a->b message test',
    '2 dropped(partition) a->b message test',
  ]);
});

test('a member that crashes while serving a request never answers it', async (t) => {
  const { clock, network } = setup({ minDelayMs: 1, maxDelayMs: 1 });
  const a = network.transport('a');
  let release: () => void = () => {};
  network.transport('b').listen('rpc', {
    onMessage: () => {},
    onRequest: () =>
      new Promise((resolve) => (release = () => resolve({ channel: 'rpc', body: 'late' }))),
  });
  const answer = a.request('b', { channel: 'rpc', body: null }, { timeoutMs: 30 });
  await clock.advanceAsync(1);
  network.crash('b');
  network.restart('b');
  release();
  await clock.advanceAsync(30);
  await t.throwsAsync(answer, {
    instanceOf: PeerUnreachableError,
    message: /no answer within 30 ms/,
  });
  t.is(network.stats().dropped.sender_down, 1, 'the dead incarnation could not send its answer');
});
