import { z } from 'zod';
import { pluginChoiceSchema } from '../../framework/kernel/catalog.js';

/**
 * The config file of a stream node. `node` holds the node's own options (validated by its
 * plugin, so errors name node.*); `consensus` and `objectStore` pick plugins by id from the
 * host's catalog.
 */
export const streamNodeHostConfig = z
  .object({
    node: z.record(z.string(), z.unknown()),
    consensus: pluginChoiceSchema.default({ use: 'single-member-consensus' }),
    objectStore: pluginChoiceSchema.default({ use: 'fs-object-store', options: { dir: 'data/objects' } }),
    /** How consensus members reach each other (needed by raft): e.g. raft-http-transport. */
    peerTransport: pluginChoiceSchema.optional(),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        pretty: z.boolean().optional(),
      })
      .strict()
      .default({ level: 'info' }),
  })
  .strict();

export type StreamNodeHostConfig = z.output<typeof streamNodeHostConfig>;

/** One node on loopback, durable objects and WAL under data/, a development admin token. */
export const defaultStreamNodeConfig: z.input<typeof streamNodeHostConfig> = {
  node: {
    self: 'n1',
    slots: 1000,
    http: { port: 7700, host: '127.0.0.1' },
    wal: { kind: 'file', dir: 'data/n1/wal' },
    tokens: [{ token: 'dev-admin-token', principal: 'operator', scopes: ['admin'] }],
  },
  consensus: { use: 'single-member-consensus' },
  objectStore: { use: 'fs-object-store', options: { dir: 'data/objects' } },
};
