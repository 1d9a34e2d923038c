import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import test from 'ava';
import { startAuthorityNode } from '@baton/host-authority-node/internal/host.js';
import { startStreamNode } from '@baton/host-stream-node/internal/host.js';
import { spawnBaton } from '../cli/run-baton.js';
import { makeTestCertificates, type TestCertificates } from '../support/test-certificates.js';

const TOKEN = 'tls-admin-token';

async function certificates(t: { teardown(fn: () => Promise<void>): void }): Promise<TestCertificates> {
  const certs = await makeTestCertificates();
  t.teardown(() => certs.remove());
  return certs;
}

/** A stream node of its own whose API serves HTTPS with the loopback certificate. */
async function tlsStreamNode(certs: TestCertificates) {
  return startStreamNode({
    node: {
      self: 'n1',
      http: { port: 0, tls: certs.loopback },
      wal: { kind: 'memory' },
      tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
    },
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: { level: 'silent' },
  });
}

/** GET over https trusting the test CA (this process has no NODE_EXTRA_CA_CERTS). */
function getTrusting(url: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a stream node serves its API over HTTPS and baton talks to it when NODE_EXTRA_CA_CERTS names the CA', async (t) => {
  const certs = await certificates(t);
  const { host, node } = await tlsStreamNode(certs);
  t.teardown(() => host.stop());
  t.regex(node.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const trusted = { NODE_EXTRA_CA_CERTS: certs.ca.certFile };
  const created = await spawnBaton(['streams', 'create', 'over-tls', '--url', node.url, '--token', TOKEN], { env: trusted });
  t.is(created.code, 0, created.stderr);
  const listed = await spawnBaton(['streams', 'list', '--url', node.url, '--token', TOKEN, '--json'], { env: trusted });
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual((JSON.parse(listed.stdout) as { streams: { stream: string }[] }).streams.map((s) => s.stream), ['over-tls']);
  // The node registered itself under its https address, the one clients are sent to.
  const nodes = await spawnBaton(['streams', 'nodes', '--url', node.url, '--token', TOKEN, '--json'], { env: trusted });
  t.is(nodes.code, 0, nodes.stderr);
  t.true(nodes.stdout.includes(node.url));
});

test('baton refuses a node whose certificate it does not trust, and says how to trust the CA', async (t) => {
  const certs = await certificates(t);
  const { host, node } = await tlsStreamNode(certs);
  t.teardown(() => host.stop());
  const untrusted = await spawnBaton(['streams', 'list', '--url', node.url, '--token', TOKEN], { env: { NODE_EXTRA_CA_CERTS: '' } });
  t.is(untrusted.code, 3, untrusted.stderr);
  t.regex(untrusted.stderr, /TLS certificate is not trusted/);
  t.regex(untrusted.stderr, /NODE_EXTRA_CA_CERTS/);
});

test('plain HTTP to the TLS port fails cleanly: baton exits 3 and advises https, the node keeps serving HTTPS', async (t) => {
  const certs = await certificates(t);
  const { host, node } = await tlsStreamNode(certs);
  t.teardown(() => host.stop());
  const plainUrl = node.url.replace(/^https:/, 'http:');
  const plain = await spawnBaton(['streams', 'list', '--url', plainUrl, '--token', TOKEN], { env: { NODE_EXTRA_CA_CERTS: certs.ca.certFile } });
  t.is(plain.code, 3, plain.stderr);
  t.regex(plain.stderr, /https:\/\//);
  t.false(plain.stderr.includes('    at '), 'no stack trace');
  t.is(await getTrusting(`${node.url}/livez`, await readFile(certs.ca.certFile)), 200);
});

test('an authority node serves its control listener and public server over HTTPS; baton authority talks to it', async (t) => {
  const certs = await certificates(t);
  const { host, node } = await startAuthorityNode({
    node: {
      self: 'east-1',
      mode: 'ha',
      roster: { east: { members: { 'east-1': { public: 'https://127.0.0.1:7600' } } } },
      public: { port: 0, tls: certs.loopback },
      control: { port: 0, tls: certs.loopback },
      tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin:read', 'admin:write'] }],
    },
    dataDir: null,
    identity: { use: 'identity-opaque' },
    log: { level: 'silent' },
  });
  t.teardown(() => host.stop());
  t.regex(node.controlAddress.url, /^https:/);
  t.regex(node.publicAddress.url, /^https:/);
  const ca = await readFile(certs.ca.certFile);
  t.is(await getTrusting(`${node.publicAddress.url}/livez`, ca), 200);
  const members = await spawnBaton(['authority', 'members', '--url', node.controlAddress.url, '--token', TOKEN, '--json'], {
    env: { NODE_EXTRA_CA_CERTS: certs.ca.certFile },
  });
  t.is(members.code, 0, members.stderr);
  t.true(members.stdout.includes('east-1'));
  const untrusted = await spawnBaton(['authority', 'members', '--url', node.controlAddress.url, '--token', TOKEN], { env: { NODE_EXTRA_CA_CERTS: '' } });
  t.is(untrusted.code, 3);
  t.regex(untrusted.stderr, /NODE_EXTRA_CA_CERTS/);
});
