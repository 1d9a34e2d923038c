import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Koa from 'koa';
import test, { type ExecutionContext } from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { createHttpServer } from '@baton/http/internal/http-server.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { makeTestCertificates, type TestCertificates } from '../support/test-certificates.js';
import { spawnBaton } from './run-baton.js';
import { workDir } from './temp-project.js';

/** An https listener answering a page of streams, and the bearer tokens it was sent. */
async function streamListing(t: ExecutionContext, certs: TestCertificates): Promise<{ url: string; tokens: string[] }> {
  const tokens: string[] = [];
  const app = new Koa();
  app.use((ctx) => {
    tokens.push(ctx.get('authorization'));
    ctx.body = { streams: [{ stream: 'tls-events', owner: 'n1', epoch: 1, state: 'Open', tail: 0, transfer: null }], next: null, total: 1 };
  });
  const server = createHttpServer({ app, port: 0, clock: new SystemClock(), tls: certs.loopback });
  const bound = await server.listen();
  t.teardown(() => server.stop());
  return { url: bound.url, tokens };
}

test('--cacert trusts a CA for one command, and --token-file sends the first line of a file as the token', async (t) => {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  const { url, tokens } = await streamListing(t, certs);
  const tokenFile = join(await workDir(t), 'token');
  await writeFile(tokenFile, 's3cret\nanything after the first line is ignored\n', { mode: 0o600 });

  const untrusted = await spawnBaton(['streams', 'list', '--url', url, '--token-file', tokenFile]);
  t.is(untrusted.code, ExitCode.Unreachable, untrusted.stdout);
  t.regex(untrusted.stderr, /TLS certificate is not trusted/);
  const trusted = await spawnBaton(['streams', 'list', '-o', 'name', '--url', url, '--token-file', tokenFile, '--cacert', certs.ca.certFile]);
  t.is(trusted.code, ExitCode.Ok, trusted.stderr);
  t.is(trusted.stdout, 'tls-events\n');
  t.deepEqual(tokens, ['Bearer s3cret']);

  const missing = await spawnBaton(['streams', 'list', '--url', url, '--token-file', join(certs.dir, 'nope')]);
  t.is(missing.code, ExitCode.Failed);
  t.regex(missing.stderr, /--token-file .*nope: cannot read it/);
});
