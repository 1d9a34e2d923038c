import test from 'ava';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LOGGER } from '@baton/contracts/internal/logger.js';
import { PEER_AUTH, peerAuthPlugin } from '@baton/http/internal/peer-auth-plugin.js';
import { PeerAuthenticator, peerSecretDigest } from '@baton/http/internal/peer-auth.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { MemoryLogger } from '../../plugins/raft/support/silent-logger.js';
import { testPeerAuth, testPeerSecret } from '../../support/peer-auth.js';

const members = ['n1', 'n2', 'n3'];

function authOf(self: string): PeerAuthenticator {
  const { secret, peers } = testPeerAuth(self, members);
  return PeerAuthenticator.secure(self, secret, peers);
}

test('a member is authenticated by its own secret only; neither a digest nor another member secret passes', (t) => {
  const n1 = authOf('n1');
  t.deepEqual(n1.verify({ member: 'n2', secret: testPeerSecret('n2') }), { member: 'n2', authenticated: true });
  t.is(n1.verify({ member: 'n2', secret: testPeerSecret('n3') }), 'wrong_secret', "n3 cannot speak as n2 with its own secret");
  t.is(n1.verify({ member: 'n2', secret: peerSecretDigest(testPeerSecret('n2')) }), 'wrong_secret', 'the digest n1 holds is not a credential');
  t.is(n1.verify({ member: 'n4', secret: testPeerSecret('n4') }), 'unknown_member');
  t.is(n1.verify({ member: 'n2' }), 'missing');
  t.is(n1.verify({}), 'missing');
  t.is(n1.verify({ member: 'constructor', secret: testPeerSecret('constructor') }), 'unknown_member');
  t.is(n1.verify({ member: '__proto__', secret: 'x'.repeat(40) }), 'unknown_member');
});

test('what a member sends proves it to every peer that lists its digest', (t) => {
  const headers = authOf('n2').outboundHeaders();
  const verdict = authOf('n1').verify({ member: headers['x-baton-member'], secret: headers['x-baton-peer-secret'] });
  t.deepEqual(verdict, { member: 'n2', authenticated: true });
});

test('insecure: true trusts the name a peer claims, and says it is unauthenticated', (t) => {
  const auth = PeerAuthenticator.insecure('n1');
  t.deepEqual(auth.verify({ member: 'n2' }), { member: 'n2', authenticated: false });
  t.is(auth.verify({}), 'missing');
  t.deepEqual(auth.outboundHeaders(), { 'x-baton-member': 'n1' });
});

function build(options: Record<string, unknown>, logger = new MemoryLogger()) {
  const host = createHost().value(LOGGER, logger).add(peerAuthPlugin, options, 'peerAuth').build();
  return host.get(PEER_AUTH);
}

test('a member with peers and neither peerAuth nor insecure refuses to start, naming both', (t) => {
  const error = t.throws(() => build({ self: 'n1', peers: ['n1', 'n2'] }));
  t.regex(error!.message, /peer authentication is not configured.*n2.*peerAuth.*insecure: true/s);
});

test('a lone member needs no credential and refuses every peer', (t) => {
  const auth = build({ self: 'n1', peers: ['n1'] });
  t.false(auth.insecure);
  t.is(auth.verify({ member: 'n2', secret: testPeerSecret('n2') }), 'unknown_member');
});

test('insecure: true is logged as a warning when the member starts, and cannot be combined with peerAuth', (t) => {
  const logger = new MemoryLogger();
  const auth = build({ self: 'n1', peers: ['n2'], insecure: true }, logger);
  t.true(auth.insecure);
  t.true(logger.records.some((r) => r.level === 'warn' && /NOT authenticated/.test(r.msg ?? '')));
  t.throws(() => build({ self: 'n1', peers: ['n2'], insecure: true, peerAuth: testPeerAuth('n1', members) }), { message: /both peerAuth and insecure/ });
});

test('peerAuth must list a digest for every peer, and digests must be well formed', (t) => {
  t.throws(() => build({ self: 'n1', peers: members, peerAuth: testPeerAuth('n1', ['n1', 'n2']) }), { message: /no digest for n3/ });
  t.throws(() => build({ self: 'n1', peers: ['n2'], peerAuth: { secret: testPeerSecret('n1'), peers: { n2: 'md5:abc' } } }), { message: /sha256/ });
  t.throws(() => build({ self: 'n1', peers: ['n2'], peerAuth: { secret: 'short', peers: {} } }), { message: /32 characters/ });
});

test('a secret file is read, and a warning names it when group or others can read it', async (t) => {
  const dir = await makeTempDir('peer-secret');
  try {
    const file = join(dir.path, 'peer-secret');
    await writeFile(file, `${testPeerSecret('n1')}\n`, { mode: 0o600 });
    const quiet = new MemoryLogger();
    const auth = build({ self: 'n1', peers: ['n2'], peerAuth: { secretFile: file, peers: testPeerAuth('n1', members).peers } }, quiet);
    t.is(auth.outboundHeaders()['x-baton-peer-secret'], testPeerSecret('n1'));
    t.false(quiet.records.some((r) => r.level === 'warn'));
    await chmod(file, 0o644);
    const loud = new MemoryLogger();
    build({ self: 'n1', peers: ['n2'], peerAuth: { secretFile: file, peers: testPeerAuth('n1', members).peers } }, loud);
    t.true(loud.records.some((r) => r.level === 'warn' && String(r.msg).includes(file) && /chmod 600/.test(String(r.msg))));
  } finally {
    await dir.remove();
  }
});

test('while a secret rotates, every digest listed for the member is accepted, and only those', (t) => {
  const rotated = 'the new secret of n2, rotated in this test'.padEnd(40, '.');
  const auth = PeerAuthenticator.secure('n1', testPeerSecret('n1'), { n2: [peerSecretDigest(testPeerSecret('n2')), peerSecretDigest(rotated)] });
  t.deepEqual(auth.verify({ member: 'n2', secret: rotated }), { member: 'n2', authenticated: true });
  t.deepEqual(auth.verify({ member: 'n2', secret: testPeerSecret('n2') }), { member: 'n2', authenticated: true });
  t.is(auth.verify({ member: 'n2', secret: testPeerSecret('n3') }), 'wrong_secret');
});
