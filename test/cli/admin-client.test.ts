import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { adminRequest } from '@baton/cli/internal/admin-client.js';
import { FailedError, UnreachableError } from '@baton/cli/internal/cli-errors.js';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';

/** A real HTTP server on a free loopback port answering with `handler`; closed after the test. */
async function serve(
  t: import('ava').ExecutionContext,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('a refused connection is UnreachableError naming the address, exit code 3', async (t) => {
  const port = await closedPort();
  const error = await t.throwsAsync(
    adminRequest(`http://127.0.0.1:${port}`, { method: 'GET', path: '/members' }),
    {
      instanceOf: UnreachableError,
    },
  );
  t.is(error!.exitCode, ExitCode.Unreachable);
  t.is(error!.address, `http://127.0.0.1:${port}`);
  t.regex(
    error!.message,
    new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}: connection refused`),
  );
});

test('a server that does not answer in time is unreachable, saying how long was waited', async (t) => {
  const base = await serve(t, () => undefined);
  const error = await t.throwsAsync(
    adminRequest(base, { method: 'GET', path: '/slow', timeoutMs: 100 }),
    {
      instanceOf: UnreachableError,
    },
  );
  t.regex(error!.message, /no answer within 100 ms/);
});

test('a problem+json refusal becomes FailedError with the server words and the problem type as code', async (t) => {
  const base = await serve(t, (_req, res) => {
    res.writeHead(409, { 'content-type': 'application/problem+json' });
    res.end(
      JSON.stringify({
        type: 'https://baton.dev/problems/transfer-in-progress',
        title: 'Conflict',
        detail: 'proj is already moving to west',
      }),
    );
  });
  const error = await t.throwsAsync(
    adminRequest(base, {
      method: 'POST',
      path: '/availability/v1/transfers',
      body: { authority: 'proj' },
    }),
    { instanceOf: FailedError },
  );
  t.is(error!.exitCode, ExitCode.Failed);
  t.is(error!.code, 'transfer-in-progress');
  t.regex(
    error!.message,
    /^http:\/\/127\.0\.0\.1:\d+ refused \(409\): proj is already moving to west/,
  );
});

test('a 401 says how to give a token', async (t) => {
  const base = await serve(t, (_req, res) => {
    res.writeHead(401, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ title: 'Unauthorized' }));
  });
  const error = await t.throwsAsync(adminRequest(base, { method: 'GET', path: '/x' }), {
    instanceOf: FailedError,
  });
  t.regex(error!.message, /refused \(401\): Unauthorized \(give a token with --token/);
});

test('the request carries the token, the idempotency key and the JSON body; the answer is parsed', async (t) => {
  let seen: { headers: IncomingMessage['headers']; body: string; url?: string } | undefined;
  const base = await serve(t, (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen = { headers: req.headers, body, url: req.url };
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ accepted: true }));
    });
  });
  const answer = await adminRequest<{ accepted: boolean }>(`${base}/`, {
    method: 'POST',
    path: '/t',
    token: 'secret',
    idempotencyKey: 'k-1',
    body: { a: 1 },
  });
  t.deepEqual(answer, { status: 202, body: { accepted: true } });
  t.is(seen?.url, '/t');
  t.is(seen?.headers.authorization, 'Bearer secret');
  t.is(seen?.headers['idempotency-key'], 'k-1');
  t.deepEqual(JSON.parse(seen!.body), { a: 1 });
});

test('an address that is not an http URL is refused before any request', async (t) => {
  for (const base of ['localhost:7601', 'ftp://127.0.0.1:21']) {
    const error = await t.throwsAsync(adminRequest(base, { method: 'GET', path: '/x' }), {
      instanceOf: FailedError,
    });
    t.is(error!.code, 'invalid_address');
    t.regex(error!.message, /http:\/\/host:port/);
  }
});
