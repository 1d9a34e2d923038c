import { hostLogConfig } from '@baton/kernel';
import { z } from 'zod';

const pluginOptions = z.record(z.string(), z.unknown()).default({});

/**
 * The config file of this host (config/host.json). Each section is handed to one plugin, which
 * validates it: a mistake fails the start with the section's path (e.g. auditStore.dir).
 * Any value can be overridden from the environment: BATON__node__public__port=8080.
 */
export const hostConfig = z
  .object({
    /** The authority node itself: who it is, where it listens, its roster and tokens. */
    node: z.record(z.string(), z.unknown()),
    consensus: pluginOptions,
    auditStore: pluginOptions,
    identity: pluginOptions,
    log: hostLogConfig,
    /** This member's peer secret and its peers' digests (checked by the peer-auth plugin). */
    peerAuth: z.unknown().optional(),
    /** Accept unauthenticated peers: only on a network nobody else reaches; warned at every start. */
    insecure: z.boolean().default(false),
  })
  .strict();

export type HostConfig = z.output<typeof hostConfig>;
