import { z } from 'zod';
import { pluginChoiceSchema, hostLogConfig } from '@baton/kernel';
import { peerAuthConfigSchema, tracingOptions } from '@baton/http';

/**
 * The config file of a stream node. `node` holds the node's own options (validated by its
 * plugin, so errors name node.*); `consensus`, `peerTransport` and `objectStore` pick plugins by
 * id from the host's catalog.
 *
 * `dataDir` holds what the node must not lose and the config did not place elsewhere: the Raft
 * log and snapshots of the stream metadata (nodes, owners, epochs, pending transfers) and, by
 * default, the segment objects. `null` keeps both in memory instead, for tests and throwaway
 * development nodes: a restart then loses every stream, owner and epoch.
 */
export const streamNodeHostConfig = z
  .object({
    node: z.record(z.string(), z.unknown()),
    dataDir: z.string().min(1).nullable().default('data'),
    /** Default: a Raft whose only voter is this node, its log under `<dataDir>/raft`. */
    consensus: pluginChoiceSchema.optional(),
    /** How consensus members reach each other. Default for raft: HTTP on the node's listener. */
    peerTransport: pluginChoiceSchema.optional(),
    /** Default: files under `<dataDir>/objects` (memory when dataDir is null). */
    objectStore: pluginChoiceSchema.optional(),
    /**
     * Where this member keeps its copy of the audit trail (every ownership change, hash-chained).
     * Default: files under `<dataDir>/audit` (memory when dataDir is null).
     */
    auditStore: pluginChoiceSchema.optional(),
    log: hostLogConfig,
    /**
     * This member's peer credential and its peers' digests: required once the node has peers
     * (framework/http/peer-auth.ts; `baton up` writes it).
     */
    peerAuth: peerAuthConfigSchema.optional(),
    /** Accept peers without credentials: only on a network nobody else reaches; warned at every start. */
    insecure: z.boolean().default(false),
    /** OpenTelemetry traces over OTLP/HTTP (framework/http/tracing-plugin.ts); off when absent. */
    tracing: tracingOptions.optional(),
  })
  .strict();

export type StreamNodeHostConfig = z.output<typeof streamNodeHostConfig>;

/** One node on loopback, metadata, objects and WAL durable under data/, a development admin token. */
export const defaultStreamNodeConfig: z.input<typeof streamNodeHostConfig> = {
  node: {
    self: 'n1',
    slots: 1000,
    http: { port: 7700, host: '127.0.0.1' },
    wal: { kind: 'file', dir: 'data/n1/wal' },
    tokens: [{ token: 'dev-admin-token', principal: 'operator', scopes: ['admin', 'stream:append', 'stream:read'] }],
  },
  dataDir: 'data',
};
