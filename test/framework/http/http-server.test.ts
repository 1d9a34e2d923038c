import { Agent, request } from 'node:http';
import { connect, createServer } from 'node:net';
import Koa from 'koa';
import test from 'ava';
import { createHttpServer, HttpListenError } from '@baton/http/internal/http-server.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

function helloApp(onRequest?: () => Promise<void>): Koa {
  const app = new Koa();
  app.use(async (ctx) => {
    await onRequest?.();
    ctx.body = { hello: 'world' };
  });
  return app;
}

/** GET through a given agent; resolves with the status and the Connection header. */
function get(url: string, agent: Agent): Promise<{ status: number; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('port 0 binds a free port and listen returns the bound address', async (t) => {
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock() });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  t.true(bound.port > 0);
  t.is(bound.host, '127.0.0.1');
  t.is(bound.url, `http://127.0.0.1:${bound.port}`);
  t.deepEqual(server.address, bound);
  const res = await fetch(bound.url);
  t.deepEqual(await res.json(), { hello: 'world' });
});

test('start twice is refused; stop is idempotent', async (t) => {
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock() });
  await server.start();
  await t.throwsAsync(server.start(), { message: /already started/ });
  await server.stop();
  await server.stop();
  t.throws(() => createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock() }).address, {
    message: /not started/,
  });
});

test('a taken port fails with HttpListenError naming the address and what to do', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const port = (blocker.address() as { port: number }).port;
  const server = createHttpServer({ app: helloApp(), port, clock: new SystemClock(), name: 'control' });
  const error = await t.throwsAsync(server.listen(), { instanceOf: HttpListenError });
  t.regex(error!.message, new RegExp(`control listener cannot bind 127\\.0\\.0\\.1:${port}: another process holds it`));
});

test('stop closes idle keep-alive connections at once, without waiting for the drain deadline', async (t) => {
  // A virtual clock that never advances: stop can only resolve if it closes the idle socket itself.
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new VirtualClock(), drainMs: 60_000 });
  const { url } = await server.listen();
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  const first = await get(url, agent);
  t.is(first.status, 200);
  t.is(first.connection, 'keep-alive');
  await server.stop();
  await t.throwsAsync(fetch(url));
});

test('an in-flight request finishes during stop and its connection is then closed', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const inHandler = new Promise<void>((resolve) => (arrived = resolve));
  const server = createHttpServer({
    app: helloApp(async () => {
      arrived();
      await released;
    }),
    port: 0,
    clock: new VirtualClock(),
  });
  const { url } = await server.listen();
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  const response = get(url, agent);
  await inHandler;
  let stopped = false;
  const stopping = server.stop().then(() => (stopped = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.false(stopped, 'stop waits for the in-flight request');
  release();
  const res = await response;
  t.is(res.status, 200);
  t.is(res.connection, 'close');
  await stopping;
  t.true(stopped);
});

test('a request still running at the drain deadline has its connection cut', async (t) => {
  const clock = new VirtualClock();
  let arrived!: () => void;
  const inHandler = new Promise<void>((resolve) => (arrived = resolve));
  const server = createHttpServer({
    app: helloApp(async () => {
      arrived();
      await new Promise(() => undefined);
    }),
    port: 0,
    clock,
    drainMs: 1_000,
  });
  const { url } = await server.listen();
  const response = get(url, new Agent({ keepAlive: false }));
  await inHandler;
  const stopping = server.stop();
  clock.advance(1_000);
  await stopping;
  await t.throwsAsync(response, { message: /socket hang up|ECONNRESET/ });
});

/** Sends raw bytes and resolves with everything the server wrote before it closed the connection. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

test('a request the HTTP parser refuses is answered as problem+json: 431 for oversized headers, 400 for a malformed request', async (t) => {
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock() });
  const { port, url } = await server.listen();
  t.teardown(() => server.stop());
  const cases = [
    { name: 'a 20 KB URL', bytes: `GET /?after=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`, status: 431, type: 'urn:baton:problem:headers-too-large' },
    { name: 'a bad method', bytes: 'B@D / HTTP/1.1\r\nHost: a\r\n\r\n', status: 400, type: 'urn:baton:problem:malformed-request' },
    { name: 'a control byte in a header', bytes: 'GET / HTTP/1.1\r\nHost: a\r\nIdempotency-Key: a\x01b\r\n\r\n', status: 400, type: 'urn:baton:problem:malformed-request' },
  ];
  for (const { name, bytes, status, type } of cases) {
    const answer = await rawExchange(port, bytes);
    const [head, body] = answer.split('\r\n\r\n');
    t.regex(head, new RegExp(`^HTTP/1.1 ${status} `), name);
    t.regex(head, /\r\nContent-Type: application\/problem\+json\r\n/i, name);
    t.regex(head, /\r\nConnection: close(\r\n|$)/i, name);
    t.like(JSON.parse(body), { type, status }, name);
    t.true(typeof JSON.parse(body).detail === 'string', `${name}: the problem says what to do`);
  }
  t.deepEqual(await (await fetch(url)).json(), { hello: 'world' }, 'the listener still serves');
});
