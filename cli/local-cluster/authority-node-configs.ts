import { join, resolve } from 'node:path';
import type { ClusterRecord } from './cluster-record.js';
import type { LocalNodeConfig } from './local-cluster.js';
import { writeNodeConfigFile } from './node-config-file.js';
import { peerAuthOf } from './peer-credentials.js';
import { localClusterTls } from './cluster-tls.js';

/** The members of the local authority cluster: one per datacenter, in start order. */
export const LOCAL_AUTHORITY_MEMBERS = [
  { id: 'east-1', datacenter: 'east' },
  { id: 'west-1', datacenter: 'west' },
  { id: 'north-1', datacenter: 'north' },
] as const;

/** Each member listens twice: its public server (peers, Raft, writes) and its control listener. */
export const AUTHORITY_PORT_KEYS = LOCAL_AUTHORITY_MEMBERS.flatMap(({ id }) => [
  `${id}.public`,
  `${id}.control`,
]);

export interface LocalAuthorityNodeConfig extends LocalNodeConfig {
  datacenter: string;
  /** The public server, where the roster points and Raft traffic arrives. */
  publicUrl: string;
}

/**
 * Writes one authority-node config per member, all in mode ha: voters of one Raft that talks
 * HTTP on their public servers, each with its Raft log, change feed and audit on files under
 * `<dataDir>/<id>`. `url` is the control listener, where `baton authority` talks. The admin
 * token may also write to an authority (scope authority:write), so a person can move a
 * barrier by hand. Members prove themselves to one another with their own peer secrets
 * (peerAuth), on Raft traffic, feed pulls and probes alike.
 */
export async function writeAuthorityNodeConfigs(
  dataDir: string,
  record: ClusterRecord,
): Promise<LocalAuthorityNodeConfig[]> {
  const root = resolve(dataDir);
  const tls = await localClusterTls(dataDir, record, LOCAL_AUTHORITY_MEMBERS.map(({ id }) => id));
  const url = (key: string) => `${tls ? 'https' : 'http'}://127.0.0.1:${record.ports[key]}`;
  const roster = Object.fromEntries(
    LOCAL_AUTHORITY_MEMBERS.map(({ id, datacenter }) => [
      datacenter,
      { members: { [id]: { public: url(`${id}.public`) } } },
    ]),
  );
  const voters = LOCAL_AUTHORITY_MEMBERS.map(({ id }) => id);
  const configs: LocalAuthorityNodeConfig[] = [];
  for (const { id, datacenter } of LOCAL_AUTHORITY_MEMBERS) {
    const config = {
      node: {
        self: id,
        mode: 'ha',
        roster,
        public: { port: record.ports[`${id}.public`], host: '127.0.0.1', ...(tls ? { tls: tls.certificateOf(id) } : {}) },
        control: { port: record.ports[`${id}.control`], host: '127.0.0.1', ...(tls ? { tls: tls.certificateOf(id) } : {}) },
        tokens: [
          {
            token: record.token,
            principal: 'operator',
            scopes: ['admin:write', 'admin:read', 'authority:write'],
          },
        ],
      },
      // Raft log under raft/, change feed under feed/, audit under audit/: the host's defaults.
      dataDir: join(root, id),
      consensus: { use: 'raft', options: { member: id, voters } },
      // Raft traffic, feed pulls and probes between members: each with its own secret.
      peerAuth: peerAuthOf(record.peerSecrets, id, voters),
      log: { level: 'info', pretty: false },
    };
    const written = await writeNodeConfigFile(
      join(root, id),
      { id, url: url(`${id}.control`), ...(tls ? { caFile: tls.caFile } : {}) },
      config,
    );
    configs.push({ ...written, datacenter, publicUrl: url(`${id}.public`) });
  }
  return configs;
}
