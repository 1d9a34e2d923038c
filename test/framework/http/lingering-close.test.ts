import { connect, type Socket } from 'node:net';
import Koa from 'koa';
import test from 'ava';
import type { Logger } from '@baton/contracts/internal/logger.js';
import { createHttpServer } from '@baton/http/internal/http-server.js';
import { readJsonBody } from '@baton/http/internal/json-body.js';
import { problemHandling } from '@baton/http/internal/problem-middleware.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { eventually } from '../../hosts/eventually.js';

const LIMIT = 1024;
const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => silent };

function limitedApp(onFinished: () => void = () => undefined): Koa {
  const app = new Koa();
  app.use(async (ctx, next) => {
    ctx.res.on('finish', onFinished);
    await next();
  });
  app.use(problemHandling({ logger: silent }));
  app.use(async (ctx) => {
    ctx.body = { got: await readJsonBody(ctx, { limitBytes: LIMIT }) };
  });
  return app;
}

/**
 * A client that declares a large body, sends part of it, does not read while the server
 * answers and closes, then sends more: against a server that closed its socket at once, those
 * bytes are answered with a reset that destroys the unread answer.
 */
async function slowSender(port: number, answered: () => Promise<void>): Promise<string> {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  // Not reading: what the server answers stays in the kernel's buffer until resume below.
  socket.pause();
  const total = 4 * 1024 * 1024;
  socket.write(`POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`);
  socket.write(Buffer.alloc(64 * 1024, 0x20));
  await answered();
  const outcome = new Promise<string>((resolve) => {
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(`${received}\n[error ${error.code}]`));
    socket.on('close', () => resolve(received));
  });
  socket.write(Buffer.alloc(256 * 1024, 0x20), () => undefined);
  // Give the server's side time to answer those bytes (a reset, or nothing while it lingers).
  await new SystemClock().sleep(200);
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.resume();
  socket.end();
  return outcome;
}

test('a body over the limit is answered 413 problem+json, and the answer reaches a client still sending its body', async (t) => {
  let answers = 0;
  const server = createHttpServer({ app: limitedApp(() => void answers++), port: 0, clock: new SystemClock() });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  const text = await slowSender(bound.port, () => eventually(() => answers >= 1, 'the 413 to be written', 10_000));
  t.regex(text, /^HTTP\/1\.1 413 /, text.slice(0, 200));
  t.regex(text, /content-type: application\/problem\+json/i);
  t.regex(text, /urn:baton:problem:body-too-large/);
  t.notRegex(text, /\[error/);
});

test('a closing connection lingers only a bounded time: a client that keeps it open without sending is cut', async (t) => {
  const server = createHttpServer({ app: limitedApp(), port: 0, clock: new SystemClock() });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  const socket = connect(bound.port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(`POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * LIMIT}\r\n\r\n`);
  // The client never sends its body nor closes: the server closes it after lingering.
  await closed;
  t.regex(received, /^HTTP\/1\.1 413 /);
});
