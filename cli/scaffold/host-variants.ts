/**
 * What `baton new host` can compose: for each variant, the contracts a host must choose a plugin
 * for (slots), and for each choice where the plugin comes from, its options in the generated
 * config file, and its options in the generated test (isolated: a temp dir, a spawned server).
 */
export interface HostPluginChoice {
  key: string;
  summary: string;
  importFrom: string;
  exportName: string;
  /** Options written to config/host.json. */
  config: Record<string, unknown>;
  /** A TypeScript expression for the options in the generated test (may await the helpers of test/support.ts). */
  testOptions: string;
}

export interface HostSlot {
  /** Key in the generated config file, and the name of the option (`--audit-store`). */
  key: string;
  flag: string;
  label: string;
  choices: HostPluginChoice[];
  defaultChoice: string;
}

export interface HostVariant {
  name: 'stream' | 'authority';
  summary: string;
  slots: HostSlot[];
  /** The `node` section of the generated config/host.json, with the generated admin token. */
  nodeConfig(adminToken: string): Record<string, unknown>;
  /** Sections of config/host.json for the plugins the variant's template always composes. */
  fixedConfig?: Record<string, unknown>;
  /** Why it cannot be generated yet, when it cannot. */
  unavailable?: string;
}

const NODE_ID = 'east-1';
const STREAM_NODE_ID = 'n1';

const identityChoices: HostPluginChoice[] = [
  ['opaque', 'opaqueIdentityPlugin', 'any Unicode text (NFC), for ecosystems Baton does not know'],
  ['npm', 'npmIdentityPlugin', 'npm package names'],
  ['pypi', 'pypiIdentityPlugin', 'PyPI project names (PEP 503 normalised)'],
  ['oci', 'ociIdentityPlugin', 'OCI repository names'],
].map(([key, exportName, summary]) => ({
  key,
  summary,
  importFrom: '@baton/plugin-identity',
  exportName,
  config: {},
  testOptions: '{}',
}));

export const HOST_VARIANTS: readonly HostVariant[] = [
  {
    name: 'authority',
    summary: "planned transfers of a repository's write authority between datacenters",
    nodeConfig: (adminToken) => ({
      self: NODE_ID,
      mode: 'ha',
      roster: { east: { members: { [NODE_ID]: { public: 'http://127.0.0.1:7600' } } } },
      public: { port: 7600 },
      control: { port: 7601 },
      tokens: [{ token: adminToken, principal: 'admin', scopes: ['admin:write', 'admin:read'] }],
    }),
    slots: [
      {
        key: 'consensus',
        flag: '--consensus',
        label: 'ownership consensus',
        defaultChoice: 'single-member',
        choices: [
          {
            key: 'single-member',
            summary: 'one voter, its log under data/consensus (durable across restarts, not replicated)',
            importFrom: '@baton/plugin-raft',
            exportName: 'singleMemberConsensusPlugin',
            // On disk by default: ownership and epochs survive a restart of the generated host.
            config: { self: NODE_ID, dataDir: 'data/consensus' },
            testOptions: `{ self: '${NODE_ID}' }`,
          },
        ],
      },
      {
        key: 'auditStore',
        flag: '--audit-store',
        label: 'audit store',
        defaultChoice: 'fs',
        choices: [
          {
            key: 'fs',
            summary: 'files under a local directory, fsynced (the embedded durable default)',
            importFrom: '@baton/plugin-fs',
            exportName: 'fsAuditStorePlugin',
            config: { dir: 'data/audit' },
            testOptions: '{ dir: await tempDir(t) }',
          },
          {
            key: 'memory',
            summary: 'process memory, gone on exit (tests, demos)',
            importFrom: '@baton/plugin-memory',
            exportName: 'memoryAuditStorePlugin',
            config: {},
            testOptions: '{}',
          },
          {
            key: 'redis',
            summary: 'Redis (needs a reachable server; the test spawns redis-server)',
            importFrom: '@baton/plugin-redis',
            exportName: 'redisAuditStorePlugin',
            config: { url: 'redis://127.0.0.1:6379', keyPrefix: 'baton:' },
            testOptions: '{ url: await redisUrl(t) }',
          },
        ],
      },
      {
        key: 'identity',
        flag: '--identity',
        label: 'identity supplier',
        defaultChoice: 'opaque',
        choices: identityChoices,
      },
    ],
  },
  {
    name: 'stream',
    summary: 'streams handed off between nodes (drain, rebalance)',
    nodeConfig: (adminToken) => ({
      self: STREAM_NODE_ID,
      slots: 1000,
      http: { port: 7700, host: '127.0.0.1' },
      wal: { kind: 'file', dir: 'data/wal' },
      tokens: [{ token: adminToken, principal: 'admin', scopes: ['admin', 'stream:append', 'stream:read'] }],
    }),
    // The metadata consensus is Raft, whose members reach each other over HTTP on the node's
    // listener: the template composes the transport and its routes itself.
    fixedConfig: {
      peerTransport: { member: STREAM_NODE_ID, peers: {} },
      metrics: { labels: { node: STREAM_NODE_ID } },
    },
    slots: [
      {
        key: 'consensus',
        flag: '--consensus',
        label: 'stream metadata consensus',
        defaultChoice: 'raft',
        choices: [
          {
            key: 'raft',
            summary:
              'Raft, this node its only voter, its log under data/raft (add voters and peers to grow)',
            importFrom: '@baton/plugin-raft',
            exportName: 'raftConsensusPlugin',
            config: { member: STREAM_NODE_ID, voters: [STREAM_NODE_ID], dataDir: 'data/raft' },
            testOptions: `{ member: '${STREAM_NODE_ID}', voters: ['${STREAM_NODE_ID}'] }`,
          },
        ],
      },
      {
        key: 'objectStore',
        flag: '--object-store',
        label: 'object store',
        defaultChoice: 'fs',
        choices: [
          {
            key: 'fs',
            summary: 'files under a local directory, fsynced (the embedded durable default)',
            importFrom: '@baton/plugin-fs',
            exportName: 'fsObjectStorePlugin',
            config: { dir: 'data/objects' },
            testOptions: '{ dir: await tempDir(t) }',
          },
          {
            key: 'memory',
            summary: 'process memory, gone on exit (tests, demos)',
            importFrom: '@baton/plugin-memory',
            exportName: 'memoryObjectStorePlugin',
            config: {},
            testOptions: '{}',
          },
        ],
      },
    ],
  },
];

/**
 * Every slot flag of every variant, for the command's options. A flag two variants share
 * (`--consensus`) offers the choices of both, under both labels.
 */
export function allSlots(): HostSlot[] {
  const seen = new Map<string, HostSlot>();
  for (const variant of HOST_VARIANTS) {
    for (const slot of variant.slots) {
      const known = seen.get(slot.key);
      if (!known) {
        seen.set(slot.key, slot);
        continue;
      }
      const keys = new Set(known.choices.map((c) => c.key));
      seen.set(slot.key, {
        ...known,
        label: known.label === slot.label ? known.label : `${known.label} / ${slot.label}`,
        choices: [...known.choices, ...slot.choices.filter((c) => !keys.has(c.key))],
      });
    }
  }
  return [...seen.values()];
}
