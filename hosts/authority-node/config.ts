import { z } from 'zod';
import { pluginChoiceSchema, hostLogConfig } from '@baton/kernel';
import { peerAuthConfigSchema, tracingOptions } from '@baton/http';

/**
 * The config file of an authority node. `node` is the node itself (validated by its plugin, so
 * errors name node.*); the choices pick plugins by id from the host's catalog.
 *
 * `dataDir` holds everything the node must not lose: the Raft log and snapshots of the ownership
 * consensus (homes, epochs, idempotency receipts, pending audits), the change feed and the peers'
 * feeds it applied, and the audit. Each default below lives under it. `null` keeps all of them in
 * memory instead, for tests and throwaway development nodes: a restart then loses ownership and
 * acknowledged writes.
 */
export const authorityNodeHostConfig = z
  .object({
    node: z.record(z.string(), z.unknown()),
    dataDir: z.string().min(1).nullable().default('data'),
    /** Default: a Raft whose voters are this node alone, its log under `<dataDir>/raft`. */
    consensus: pluginChoiceSchema.optional(),
    /** How consensus members reach each other. Default for raft: HTTP to the roster's public addresses. */
    peerTransport: pluginChoiceSchema.optional(),
    /** Default: files under `<dataDir>/audit` (memory when dataDir is null). */
    auditStore: pluginChoiceSchema.optional(),
    identity: pluginChoiceSchema.default({ use: 'identity-opaque' }),
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

export type AuthorityNodeHostConfig = z.output<typeof authorityNodeHostConfig>;

/** A single-node setup: one datacenter "east", mode ha, everything durable under data/. */
export const defaultAuthorityNodeConfig: z.input<typeof authorityNodeHostConfig> = {
  node: {
    self: 'east-1',
    mode: 'ha',
    roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:7600' } } } },
    public: { port: 7600 },
    control: { port: 7601 },
    tokens: [],
  },
  dataDir: 'data',
  identity: { use: 'identity-opaque' },
};
