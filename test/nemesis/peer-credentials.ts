import { randomBytes } from 'node:crypto';
import { peerSecretDigest, type PeerAuthConfig } from '@baton/http/internal/peer-auth.js';

/**
 * Fresh peer credentials for the members of one run, as `baton up` makes them: a random secret
 * per member; each member's config holds its own secret and the digests of the others'.
 */
export function peerCredentials(members: readonly string[]): (self: string) => PeerAuthConfig {
  const secrets = new Map(members.map((id) => [id, randomBytes(24).toString('hex')]));
  return (self) => ({
    secret: secrets.get(self)!,
    peers: Object.fromEntries(
      members.filter((id) => id !== self).map((id) => [id, peerSecretDigest(secrets.get(id)!)]),
    ),
  });
}
