import { z } from 'zod';
import { pluginChoiceSchema } from '../../framework/kernel/catalog.js';

/**
 * The config file of an authority node. `node` is the node itself (validated by its plugin, so
 * errors name node.*); the three choices pick plugins by id from the host's catalog.
 */
export const authorityNodeHostConfig = z
  .object({
    node: z.record(z.string(), z.unknown()),
    consensus: pluginChoiceSchema.default({ use: 'single-member-consensus' }),
    /** How consensus members reach each other; needed by the raft consensus. */
    peerTransport: pluginChoiceSchema.optional(),
    auditStore: pluginChoiceSchema.default({ use: 'fs-audit-store', options: { dir: 'data/audit' } }),
    identity: pluginChoiceSchema.default({ use: 'identity-opaque' }),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        pretty: z.boolean().optional(),
      })
      .strict()
      .default({ level: 'info' }),
  })
  .strict();

export type AuthorityNodeHostConfig = z.output<typeof authorityNodeHostConfig>;

/** A single-node development setup: one datacenter "east", mode ha, durable audit under data/. */
export const defaultAuthorityNodeConfig: z.input<typeof authorityNodeHostConfig> = {
  node: {
    self: 'east-1',
    mode: 'ha',
    roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:7600' } } } },
    public: { port: 7600 },
    control: { port: 7601 },
    tokens: [],
  },
  consensus: { use: 'single-member-consensus' },
  auditStore: { use: 'fs-audit-store', options: { dir: 'data/audit' } },
  identity: { use: 'identity-opaque' },
};
