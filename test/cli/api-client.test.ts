import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { authorityControlApi, cliAnswer, cliCall } from '@baton/cli/internal/api-client.js';
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
    cliCall(authorityControlApi({ url: `http://127.0.0.1:${port}` }).GET('/availability/v1/members')),
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
    cliCall(authorityControlApi({ url: base }, { timeoutMs: 100 }).GET('/availability/v1/members')),
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
    cliCall(
      authorityControlApi({ url: base }).POST('/availability/v1/transfers', {
        body: { authority: 'proj', source: 'east', target: 'west', reason: 'maintenance' },
      }),
    ),
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
  const error = await t.throwsAsync(cliCall(authorityControlApi({ url: base }).GET('/availability/v1/members')), {
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
  const body = { authority: 'proj', source: 'east', target: 'west', reason: 'maintenance' };
  const answer = await cliAnswer(
    authorityControlApi({ url: `${base}/`, token: 'secret' }).POST('/availability/v1/transfers', { body, headers: { 'Idempotency-Key': 'k-1' } }),
  );
  t.deepEqual(answer, { status: 202, data: { accepted: true } as never });
  t.is(seen?.url, '/availability/v1/transfers');
  t.is(seen?.headers.authorization, 'Bearer secret');
  t.is(seen?.headers['idempotency-key'], 'k-1');
  t.deepEqual(JSON.parse(seen!.body), body);
});

test('an address that is not an http URL is refused before any request', async (t) => {
  for (const base of ['localhost:7601', 'ftp://127.0.0.1:21']) {
    const error = await t.throwsAsync(async () => cliCall(authorityControlApi({ url: base }).GET('/availability/v1/members')), {
      instanceOf: FailedError,
    });
    t.is(error!.code, 'invalid_address');
    t.regex(error!.message, /http:\/\/host:port/);
  }
});

test('a change the operator did not key goes once, without an Idempotency-Key: a 503 is the answer, not a retry', async (t) => {
  const seen: IncomingMessage['headers'][] = [];
  const base = await serve(t, (req, res) => {
    seen.push(req.headers);
    res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
    res.end(JSON.stringify({ type: 'urn:baton:problem:no-leader', title: 'Service Unavailable', detail: 'no leader yet' }));
  });
  const error = await t.throwsAsync(
    cliCall(authorityControlApi({ url: base }).POST('/availability/v1/commands', { body: { type: 'transfer_authority', authority: 'proj', target: 'east' } })),
    { instanceOf: FailedError },
  );
  t.is(error!.code, 'no-leader');
  t.regex(error!.message, /refused \(503\): no leader yet$/);
  t.is(seen.length, 1);
  t.is(seen[0]['idempotency-key'], undefined);
});
