import { get, type IncomingMessage } from 'node:http';
import Router from '@koa/router';
import test from 'ava';
import { createApiApp } from '@baton/http/internal/api-app.js';
import { EventStreams, type EventStream, type EventStreamEnd, type EventStreamLimits } from '@baton/http/internal/event-stream.js';
import { createHttpServer } from '@baton/http/internal/http-server.js';
import { serveRouter } from '@baton/http/internal/routes.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { eventually } from '../../hosts/eventually.js';
import { capturingLogger } from './harness.js';

/** A listener whose GET /watch opens an event stream, and GET /plain answers at once. */
async function listener(t: import('ava').ExecutionContext, limits: Partial<EventStreamLimits>, admission = {}) {
  const clock = new SystemClock();
  const ended: EventStreamEnd[] = [];
  const streams = new EventStreams(clock, limits, (why) => ended.push(why));
  const open: EventStream[] = [];
  const router = new Router();
  router.get('/watch', (ctx) => {
    const stream = streams.accept(ctx);
    stream.send('hello', { n: open.length });
    open.push(stream);
  });
  router.get('/plain', (ctx) => {
    ctx.body = { ok: true };
  });
  const app = createApiApp({ clock, rng: new SeededRng(3), logger: capturingLogger() });
  app.use(serveRouter(router));
  const server = createHttpServer({ app, port: 0, clock, admission, drainMs: 60_000 });
  const { url } = await server.listen();
  t.teardown(() => server.stop());
  return { url, server, streams, open, ended };
}

interface Watching {
  response: IncomingMessage;
  text: () => string;
  ended: () => boolean;
}

/** GET url as a raw HTTP client on its own connection, keeping every byte received. */
function watch(url: string, paused = false): Promise<Watching> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: { accept: 'text/event-stream' } }, (response) => {
      let text = '';
      let ended = false;
      if (!paused) response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      response.on('close', () => (ended = true));
      resolve({ response, text: () => text, ended: () => ended });
    });
    request.on('error', reject);
  });
}

test('an event stream answers text/event-stream with a retry hint and named JSON events', async (t) => {
  const { url } = await listener(t, {});
  const watcher = await watch(`${url}/watch`);
  t.is(watcher.response.statusCode, 200);
  t.regex(String(watcher.response.headers['content-type']), /^text\/event-stream/);
  t.is(watcher.response.headers['cache-control'], 'no-cache, no-transform');
  await eventually(() => watcher.text().includes('event: hello\n'), 'the first event');
  t.is(watcher.text(), 'retry: 1000\n\nevent: hello\ndata: {"n":0}\n\n');
  watcher.response.destroy();
});

test('every open stream gets a heartbeat comment, from one timer that stops with the last stream', async (t) => {
  const { url, streams, ended } = await listener(t, { heartbeatMs: 100 });
  const first = await watch(`${url}/watch`);
  const second = await watch(`${url}/watch`);
  await eventually(() => first.text().includes(': heartbeat\n\n') && second.text().includes(': heartbeat\n\n'), 'a heartbeat on both');
  first.response.destroy();
  second.response.destroy();
  await eventually(() => streams.watchers === 0, 'both streams to be forgotten');
  t.deepEqual(ended, ['client_left', 'client_left']);
});

test('one watcher past maxWatchers is refused with a 503 problem and Retry-After; a freed place is taken again', async (t) => {
  const { url, streams } = await listener(t, { maxWatchers: 2 });
  const held = [await watch(`${url}/watch`), await watch(`${url}/watch`)];
  const refused = await fetch(`${url}/watch`, { headers: { accept: 'text/event-stream' } });
  t.is(refused.status, 503);
  t.is(refused.headers.get('content-type'), 'application/problem+json');
  t.is(refused.headers.get('retry-after'), '5');
  t.like(await refused.json(), { type: 'urn:baton:problem:watchers-full', status: 503 });
  held[0].response.destroy();
  await eventually(() => streams.watchers === 1, 'the place to be freed');
  const again = await watch(`${url}/watch`);
  t.is(again.response.statusCode, 200);
  for (const w of [held[1], again]) w.response.destroy();
});

test('a watcher that stops reading is dropped once its unread bytes pass the bound, not buffered without end', async (t) => {
  const { url, open, ended } = await listener(t, { maxQueuedBytes: 64 * 1024 });
  const slow = await watch(`${url}/watch`, true);
  slow.response.pause();
  await eventually(() => open.length === 1, 'the stream to open');
  const stream = open[0]!;
  // Far more than the bound plus what the kernel's socket buffers take.
  const chunk = 'x'.repeat(16 * 1024);
  for (let i = 0; i < 4_096 && stream.isOpen; i++) {
    stream.send('fill', chunk);
    if (i % 64 === 63) await new Promise((resolve) => setImmediate(resolve));
  }
  t.false(stream.isOpen, 'the slow reader was dropped');
  t.deepEqual(ended, ['slow_reader']);
  await eventually(() => slow.ended(), 'the slow reader to see its connection end');
});

test('watchers do not count against the listener connection cap, and a stopping listener ends them at once', async (t) => {
  const { url, server, open } = await listener(t, { maxWatchers: 10 }, { maxConnections: 2 });
  const watchers = [await watch(`${url}/watch`), await watch(`${url}/watch`), await watch(`${url}/watch`)];
  await eventually(() => open.length === 3, 'three streams open on a listener that holds two connections');
  const plain = await fetch(`${url}/plain`);
  t.is(plain.status, 200, 'a request is still admitted beside them');
  await plain.arrayBuffer();
  // drainMs is a minute: only ending the streams lets stop resolve before the test's timeout.
  await server.stop();
  await eventually(() => watchers.every((w) => w.ended()), 'every watcher to see its stream end');
  t.pass();
});
