import { PEER_MEMBER_HEADER, PEER_SECRET_HEADER, PeerAuthenticator, peerSecretDigest, type PeerAuthConfig } from '@baton/http/internal/peer-auth.js';

/** A fixed secret per member, so every test node of one cluster agrees without sharing files. */
export function testPeerSecret(member: string): string {
  return `test-peer-secret-of-${member}`.padEnd(40, '.');
}

/** The `peerAuth` config block of `self` in a cluster of `members` (self may be among them). */
export function testPeerAuth(self: string, members: Iterable<string>): PeerAuthConfig {
  const peers: Record<string, string> = {};
  for (const m of members) if (m !== self) peers[m] = peerSecretDigest(testPeerSecret(m));
  return { secret: testPeerSecret(self), peers };
}

/** The authenticator of `self` in a cluster of `members`, for transports built directly. */
export function testPeerAuthenticator(self: string, members: Iterable<string>): PeerAuthenticator {
  const { secret, peers } = testPeerAuth(self, members);
  return PeerAuthenticator.secure(self, secret, peers);
}

/** The headers `member` sends with a peer request. */
export function peerHeaders(member: string, secret = testPeerSecret(member)): Record<string, string> {
  return { [PEER_MEMBER_HEADER]: member, [PEER_SECRET_HEADER]: secret };
}

/** The `peerAuth` block of `self` for every member an authority roster lists. */
export function testPeerAuthForRoster(self: string, roster: Record<string, { members: Record<string, unknown> }>): PeerAuthConfig {
  return testPeerAuth(self, Object.values(roster).flatMap((dc) => Object.keys(dc.members)));
}
