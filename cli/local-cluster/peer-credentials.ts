import { randomBytes } from 'node:crypto';
import { peerSecretDigest, type PeerAuthConfig } from '@baton/http';

/** A fresh member secret: 256 bits, printable. */
export function newPeerSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The members a local cluster's port keys name ("n1", or "east-1" of "east-1.public"). */
export function memberIdsOf(portKeys: readonly string[]): string[] {
  return [...new Set(portKeys.map((key) => key.split('.')[0]))];
}

/** Every member's secret: the ones a previous start chose, a new one for any member without. */
export function withPeerSecrets(previous: Readonly<Record<string, string>> | undefined, members: readonly string[]): Record<string, string> {
  const secrets: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const id of members) secrets[id] = previous && Object.hasOwn(previous, id) ? previous[id] : newPeerSecret();
  return { ...secrets };
}

/** The `peerAuth` block of member `self`: its own secret, and only the digests of the others'. */
export function peerAuthOf(secrets: Readonly<Record<string, string>> | undefined, self: string, members: readonly string[]): PeerAuthConfig {
  if (!secrets || !Object.hasOwn(secrets, self)) throw new Error(`the cluster record has no peer secret for ${self}`);
  const peers: Record<string, string> = {};
  for (const id of members) {
    if (id === self) continue;
    if (!Object.hasOwn(secrets, id)) throw new Error(`the cluster record has no peer secret for ${id}`);
    peers[id] = peerSecretDigest(secrets[id]);
  }
  return { secret: secrets[self], peers };
}
