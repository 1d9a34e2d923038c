import { hostLogConfig } from '@baton/kernel';
import { z } from 'zod';

const pluginOptions = z.record(z.string(), z.unknown()).default({});

/**
 * The config file of this host (config/host.json). Each section is handed to one plugin, which
 * validates it: a mistake fails the start with the section's path (e.g. objectStore.dir).
 * Any value can be overridden from the environment: BATON__node__http__port=8080.
 */
export const hostConfig = z
  .object({
    /** The stream node itself: its id, where it listens, its capacity, WAL and tokens. */
    node: z.record(z.string(), z.unknown()),
    /** The metadata consensus (Raft): this member, the voters, where its log lives. */
    consensus: pluginOptions,
    /** How the consensus members reach each other: their ids and base URLs. */
    peerTransport: pluginOptions,
    objectStore: pluginOptions,
    /** Prometheus metrics, served at /metrics. */
    metrics: pluginOptions,
    log: hostLogConfig,
    /** This member's peer secret and its peers' digests (checked by the peer-auth plugin). */
    peerAuth: z.unknown().optional(),
    /** Accept unauthenticated peers: only on a network nobody else reaches; warned at every start. */
    insecure: z.boolean().default(false),
  })
  .strict();

export type HostConfig = z.output<typeof hostConfig>;
