import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import test, { type ExecutionContext } from 'ava';
import { cliCall, streamApi } from '@baton/cli/internal/api-client.js';
import { UnreachableError } from '@baton/cli/internal/cli-errors.js';
import { fetchTrustingCa } from '@baton/cli/internal/local-cluster/fetch-trusting-ca.js';
import { createHttpServer } from '@baton/http/internal/http-server.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { makeTestCertificates, type TestCertificates } from '../support/test-certificates.js';
import { closedPort } from './closed-port.js';

/** An https listener whose answers echo what was sent; 204 for DELETE. */
async function echoServer(t: ExecutionContext, certs: TestCertificates): Promise<string> {
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method === 'DELETE') return void (ctx.status = 204);
    let body = '';
    for await (const chunk of ctx.req) body += String(chunk);
    ctx.status = 201;
    ctx.set('x-echo', 'yes');
    ctx.body = { method: ctx.method, path: ctx.path, authorization: ctx.get('authorization'), body };
  });
  const server = createHttpServer({ app, port: 0, clock: new SystemClock(), tls: certs.loopback });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  return bound.url;
}

test('it reaches a listener whose certificate the cluster CA signed, carrying method, headers and body, and answers as fetch does', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const url = await echoServer(t, certs);
  const send = fetchTrustingCa(certs.ca.certFile);
  const answer = await send(`${url}/v1/things`, {
    method: 'POST',
    headers: { authorization: 'Bearer t0ken', 'content-type': 'application/json' },
    body: '{"a":"é"}',
  });
  t.is(answer.status, 201);
  t.true(answer.ok);
  t.is(answer.headers.get('x-echo'), 'yes');
  t.deepEqual(await answer.json(), { method: 'POST', path: '/v1/things', authorization: 'Bearer t0ken', body: '{"a":"é"}' });
  const empty = await send(`${url}/v1/things/1`, { method: 'DELETE' });
  t.is(empty.status, 204);
  t.is(await empty.text(), '');
});

test('the admin client through it trusts the cluster CA, where the global fetch of this process does not', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const url = await echoServer(t, certs);
  const ping = (send?: typeof fetch) => cliCall(streamApi({ url, token: 'abc', ...(send ? { fetch: send } : {}) }).GET('/livez'));
  const trusted = (await ping(fetchTrustingCa(certs.ca.certFile))) as unknown as { authorization: string };
  t.is(trusted.authorization, 'Bearer abc');
  const untrusted = await t.throwsAsync(ping(), { instanceOf: UnreachableError });
  t.regex(untrusted.message, /not trusted/);
});

test('a refused connection and an answer that does not come fail as fetch fails, so the admin client names them', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const send = fetchTrustingCa(certs.ca.certFile);
  const refused = await t.throwsAsync(cliCall(streamApi({ url: `https://127.0.0.1:${await closedPort()}`, fetch: send }).GET('/livez')));
  t.regex(refused.message, /connection refused/);

  // Takes the request and never answers it.
  const silent = createServer({ cert: readFileSync(certs.loopback.certFile), key: readFileSync(certs.loopback.keyFile) }, () => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.closeAllConnections();
    silent.close();
  });
  const port = (silent.address() as AddressInfo).port;
  const late = await t.throwsAsync(cliCall(streamApi({ url: `https://127.0.0.1:${port}`, fetch: send }, { timeoutMs: 300 }).GET('/livez')));
  t.regex(late.message, /no answer within 300 ms/);
});
