import { chmod, readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import Koa from 'koa';
import test from 'ava';
import type { Logger } from '@baton/contracts/internal/logger.js';
import { createHttpServer } from '@baton/http/internal/http-server.js';
import { listenerTlsSchema } from '@baton/http/internal/listener-tls.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { ConfigError } from '@baton/kernel/internal/wiring-error.js';
import { makeTestCertificates } from '../../support/test-certificates.js';

function helloApp(): Koa {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { hello: 'world', secure: ctx.secure };
  });
  return app;
}

/** A logger that keeps the messages of its warnings. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const message = (a: unknown, b?: string) => (typeof a === 'string' ? a : (b ?? ''));
  const logger: Logger & { warnings: string[] } = {
    warnings,
    debug: () => {},
    info: () => {},
    warn: (a: unknown, b?: string) => void warnings.push(message(a, b)),
    error: () => {},
    child: () => logger,
  } as Logger & { warnings: string[] };
  return logger;
}

/** GET over https trusting `ca`; resolves with the status and body text. */
function getTls(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET in plain HTTP: resolves with the status, or with the error that ended the connection. */
function getPlain(url: string): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode! }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}

test('a listener with tls serves HTTPS with its certificate; its address is https', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock(), tls: certs.loopback });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  t.is(bound.url, `https://127.0.0.1:${bound.port}`);
  const answer = await getTls(bound.url, await readFile(certs.ca.certFile));
  t.is(answer.status, 200);
  t.deepEqual(JSON.parse(answer.body), { hello: 'world', secure: true });
});

test('plain HTTP to a TLS listener only loses its own connection; the listener keeps serving HTTPS', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock(), tls: certs.loopback });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  const plain = await getPlain(`http://127.0.0.1:${bound.port}/`);
  t.is(plain.status, undefined, 'no HTTP answer in clear from a TLS port');
  t.truthy(plain.error);
  t.is((await getTls(bound.url, await readFile(certs.ca.certFile))).status, 200);
});

test('a client that does not trust the CA is refused by its own TLS check, never served in clear', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock(), tls: certs.loopback });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  const error = await t.throwsAsync(fetch(bound.url));
  t.regex(String((error as { cause?: { code?: string } }).cause?.code), /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN/);
});

test('a private key readable by group or others is warned about at start, as every secret file is', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  await chmod(certs.loopback.keyFile, 0o640);
  const logger = recordingLogger();
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock(), tls: certs.loopback, logger, name: 'streams' });
  await server.listen();
  t.teardown(() => server.stop());
  t.true(logger.warnings.some((w) => w.includes(certs.loopback.keyFile) && w.includes('chmod 600')), JSON.stringify(logger.warnings));
});

test('a generated key is 0600 and a key that is 0600 starts without a warning', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const { statSync } = await import('node:fs');
  t.is(statSync(certs.loopback.keyFile).mode & 0o777, 0o600);
  t.is(statSync(certs.ca.keyFile).mode & 0o777, 0o600);
  const logger = recordingLogger();
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock(), tls: certs.loopback, logger });
  await server.listen();
  t.teardown(() => server.stop());
  t.deepEqual(logger.warnings.filter((w) => w.includes('keyFile')), []);
});

test('a certificate file that cannot be read fails the start naming the listener and the file', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const server = createHttpServer({ app: helloApp(), port: 0, clock: new SystemClock(), name: 'control', tls: { ...certs.loopback, certFile: '/nonexistent/cert.pem' } });
  const error = await t.throwsAsync(server.listen());
  t.true(error instanceof ConfigError);
  t.regex(error!.message, /control listener tls\.certFile: cannot read \/nonexistent\/cert\.pem/);
});

test('the tls config takes certFile and keyFile, caFile optional, nothing else', (t) => {
  t.true(listenerTlsSchema.safeParse({ certFile: 'a.pem', keyFile: 'a.key' }).success);
  t.true(listenerTlsSchema.safeParse({ certFile: 'a.pem', keyFile: 'a.key', caFile: 'ca.pem' }).success);
  t.false(listenerTlsSchema.safeParse({ certFile: 'a.pem' }).success);
  t.false(listenerTlsSchema.safeParse({ certFile: 'a.pem', keyFile: 'a.key', passphrase: 'x' }).success);
});
