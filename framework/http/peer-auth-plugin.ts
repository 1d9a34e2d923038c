import { z } from 'zod';
import { LOGGER, token } from '@baton/contracts';
import { definePlugin, readSecretFile, ConfigError } from '@baton/kernel';
import { PeerAuthenticator, peerAuthConfigSchema } from './peer-auth.js';

/** How this member authenticates its peers and itself to them; every peer route uses it. */
export const PEER_AUTH = token<PeerAuthenticator>('PeerAuth');

export const peerAuthPluginOptions = z
  .object({
    /** This member's id: what its peers know it by. */
    self: z.string().min(1),
    /** The members this one exchanges peer traffic with: each needs a digest in peerAuth.peers. */
    peers: z.array(z.string().min(1)).default([]),
    peerAuth: peerAuthConfigSchema.optional(),
    /** Accept peers by the name they claim, without a credential: an explicit choice, logged at every start. */
    insecure: z.boolean().default(false),
  })
  .strict();

/**
 * Builds the PeerAuthenticator from the host config's `peerAuth` and `insecure`. A member with
 * peers and neither refuses to start: peer authentication is never off by accident.
 */
export const peerAuthPlugin = definePlugin({
  id: 'peer-auth',
  description: 'Per-member peer credentials, checked on every peer route.',
  provides: [PEER_AUTH],
  requires: [LOGGER],
  options: peerAuthPluginOptions,
  register: (ctx) => {
    const o = ctx.options;
    ctx.provide(PEER_AUTH, {
      useFactory: (resolve) => {
        const logger = resolve(LOGGER);
        const peers = o.peers.filter((id) => id !== o.self);
        if (o.insecure) {
          if (o.peerAuth) throw new ConfigError('the config sets both peerAuth and insecure: true; remove one (insecure accepts unauthenticated peers)');
          logger.warn(
            { member: o.self, peers },
            'insecure: true: peers are NOT authenticated; anyone who reaches this member can propose, vote and read feeds',
          );
          return PeerAuthenticator.insecure(o.self);
        }
        if (!o.peerAuth) {
          if (peers.length > 0) {
            throw new ConfigError(
              `peer authentication is not configured, but this member talks to ${peers.join(', ')}: ` +
                'give peerAuth {secret, peers: {<member>: "sha256:<digest>"}} (baton up writes one), ' +
                'or set insecure: true to accept unauthenticated peers on a network nobody else reaches',
            );
          }
          return PeerAuthenticator.secure(o.self, undefined, {});
        }
        const missing = peers.filter((id) => !Object.hasOwn(o.peerAuth!.peers, id));
        if (missing.length > 0) {
          throw new ConfigError(`peerAuth.peers has no digest for ${missing.join(', ')}: list every member this one talks to`);
        }
        const secret = o.peerAuth.secret ?? readSecretFile(o.peerAuth.secretFile!, 'peerAuth.secretFile', logger);
        return PeerAuthenticator.secure(o.self, secret, o.peerAuth.peers);
      },
    });
  },
});
