import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import test, { type ExecutionContext } from 'ava';
import { adminRequest } from '@baton/cli/internal/admin-client.js';
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
  const request = { method: 'GET', path: '/v1/ping', token: 'abc' } as const;
  const trusted = await adminRequest<{ authorization: string }>(url, request, fetchTrustingCa(certs.ca.certFile));
  t.is(trusted.body.authorization, 'Bearer abc');
  const untrusted = await t.throwsAsync(adminRequest(url, request), { instanceOf: UnreachableError });
  t.regex(untrusted.message, /not trusted/);
});

test('a refused connection and an answer that does not come fail as fetch fails, so the admin client names them', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const send = fetchTrustingCa(certs.ca.certFile);
  const refused = await t.throwsAsync(adminRequest(`https://127.0.0.1:${await closedPort()}`, { method: 'GET', path: '/' }, send));
  t.regex(refused.message, /connection refused/);

  // Takes the request and never answers it.
  const silent = createServer({ cert: readFileSync(certs.loopback.certFile), key: readFileSync(certs.loopback.keyFile) }, () => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.closeAllConnections();
    silent.close();
  });
  const port = (silent.address() as AddressInfo).port;
  const late = await t.throwsAsync(adminRequest(`https://127.0.0.1:${port}`, { method: 'GET', path: '/', timeoutMs: 300 }, send));
  t.regex(late.message, /no answer within 300 ms/);
});
