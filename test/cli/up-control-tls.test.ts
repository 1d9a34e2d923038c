import { once } from 'node:events';
import { access, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import { writeClusterRecord } from '@baton/cli/internal/local-cluster/cluster-record.js';
import { controlRecordPath, type UpControlRecord } from '@baton/cli/internal/local-cluster/control-server.js';
import { fetchTrustingCa } from '@baton/cli/internal/local-cluster/fetch-trusting-ca.js';
import { writePrivateFile } from '@baton/cli/internal/local-cluster/private-files.js';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { workDir } from './temp-project.js';
import { startUpOnFreshPorts } from './up-process.js';

interface ListedNode {
  id: string;
  state: string;
}

async function nodeStates(cwd: string, dataDir: string): Promise<string[]> {
  const run = await runBaton(['node', 'list', '--data-dir', dataDir, '--json'], { cwd });
  if (run.code !== ExitCode.Ok) throw new Error(`baton node list exited ${run.code}: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { nodes: ListedNode[] }).nodes.map((n) => `${n.id} ${n.state}`);
}

test('baton up --tls: the control listener baton node talks to serves https with a certificate of the cluster CA, refuses plain http and requests without the admin token, and baton node list, stop and start work through it', async (t) => {
  t.timeout(240_000);
  const { up, cwd, dataDir } = await startUpOnFreshPorts(t, ['--tls'], /Ctrl-C stops the cluster/);
  const token = /admin token: (\S+)/.exec(up.stdout())![1];
  const recordFile = controlRecordPath(dataDir);
  const control = JSON.parse(await readFile(recordFile, 'utf8')) as UpControlRecord;
  t.regex(control.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  t.is(control.caFile, join(dataDir, 'tls', 'ca.pem'));
  t.is((await stat(recordFile)).mode & 0o777, 0o600, 'up.json');
  t.is((await stat(join(dataDir, 'tls', 'up-control.key'))).mode & 0o777, 0o600, 'the control listener key');

  const authorized = { authorization: `Bearer ${token}` };
  // Plain HTTP on that port, even with the right token, gets no answer: the handshake fails.
  const causeCode = (error: Error | undefined) => (error?.cause as { code?: string } | undefined)?.code;
  const plain = await t.throwsAsync(fetch(`${control.url.replace('https:', 'http:')}/nodes`, { headers: authorized }));
  t.true(['UND_ERR_SOCKET', 'ECONNRESET'].includes(causeCode(plain) ?? ''), `closed without an answer: ${String(plain?.cause)}`);
  // This process was started without the cluster CA: the listener's certificate is checked.
  const untrusted = await t.throwsAsync(fetch(`${control.url}/nodes`, { headers: authorized }));
  t.is(causeCode(untrusted), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');

  const trusting = fetchTrustingCa(control.caFile!);
  t.is((await trusting(`${control.url}/nodes`, { headers: authorized })).status, 200);
  t.is((await trusting(`${control.url}/nodes`)).status, 401, 'no token');
  t.is((await trusting(`${control.url}/nodes`, { headers: { authorization: 'Bearer not-the-admin-token' } })).status, 401, 'a wrong token');
  t.is((await trusting(`${control.url}/nodes/n1/stop`, { method: 'POST' })).status, 401, 'a stop without a token');
  t.is((await trusting(`${control.url}/elsewhere`)).status, 401, 'an unknown path is refused before it is looked up');

  // baton node trusts the cluster CA by itself (this process has no NODE_EXTRA_CA_CERTS).
  t.deepEqual(await nodeStates(cwd, dataDir), ['n1 running', 'n2 running', 'n3 running'], 'the refused stop stopped nothing');
  const stopped = await runBaton(['node', 'stop', 'n3', '--data-dir', dataDir], { cwd });
  t.is(stopped.code, ExitCode.Ok, stopped.stderr);
  t.deepEqual(await nodeStates(cwd, dataDir), ['n1 running', 'n2 running', 'n3 stopped']);
  const started = await runBaton(['node', 'start', 'n3', '--data-dir', dataDir], { cwd });
  t.is(started.code, ExitCode.Ok, started.stderr);
  t.regex(started.stdout, /started n3 \(pid \d+\)/);
  t.deepEqual(await nodeStates(cwd, dataDir), ['n1 running', 'n2 running', 'n3 running']);

  up.child.kill('SIGTERM');
  t.is(await up.exited, 0, up.stderr());
  await t.throwsAsync(access(recordFile), undefined, 'up.json goes with its baton up');
});

test('baton node does not send the admin token to a plain-http control listener of a cluster that serves TLS', async (t) => {
  const cwd = await workDir(t);
  const dataDir = join(cwd, 'data');
  await writeClusterRecord(dataDir, { variant: 'stream', ports: { n1: 7701, n2: 7702, n3: 7703 }, token: 'the-admin-token-of-a-tls-cluster', tls: true });
  const received: string[] = [];
  const listener = createServer((request, response) => {
    received.push(`${request.method} ${request.url} ${request.headers.authorization ?? ''}`);
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"nodes":[]}');
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  t.teardown(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  // As an up.json left by a baton up that served its control listener in plain HTTP.
  const stale: UpControlRecord = { pid: process.pid, variant: 'stream', url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}` };
  await writePrivateFile(controlRecordPath(dataDir), JSON.stringify(stale));

  const run = await runBaton(['node', 'list', '--data-dir', dataDir], { cwd });
  t.is(run.code, ExitCode.Failed, run.stdout);
  t.regex(run.stderr, /for a cluster that serves TLS, so the admin token is not sent to it: stop that baton up and start it again/);
  t.deepEqual(received, [], 'nothing reached the plain listener');
});
