import { join, resolve } from 'node:path';
import type { ClusterRecord } from './cluster-record.js';
import type { LocalNodeConfig, StartOptions } from './local-cluster.js';
import { writeNodeConfigFile } from './node-config-file.js';
import { peerAuthOf } from './peer-credentials.js';
import { localClusterTls } from './cluster-tls.js';

/**
 * Writes one stream-node config per node: the three are voters of one Raft that talks HTTP on
 * the nodes' own listeners; each keeps its Raft log and WAL under `<dataDir>/<id>`, and all share
 * the object store `<dataDir>/objects`, as nodes sharing one bucket do, so a stream handed to
 * another node reads its sealed segments there. Each proves itself to the others with its own
 * peer secret and holds only the digests of theirs.
 */
export async function writeStreamNodeConfigs(
  dataDir: string,
  record: ClusterRecord,
  options: Pick<StartOptions, 'zones'> = {},
): Promise<LocalNodeConfig[]> {
  const root = resolve(dataDir);
  const ids = Object.keys(record.ports);
  const tls = await localClusterTls(dataDir, record, ids);
  const scheme = tls ? 'https' : 'http';
  const urls = Object.fromEntries(ids.map((id) => [id, `${scheme}://127.0.0.1:${record.ports[id]}`]));
  const configs: LocalNodeConfig[] = [];
  for (const [i, id] of ids.entries()) {
    const nodeDir = join(root, id);
    // --zones labels the nodes in turn; without it they carry no labels.
    const zone = options.zones && options.zones.length > 0 ? options.zones[i % options.zones.length] : undefined;
    const config = {
      node: {
        self: id,
        address: urls[id],
        http: { port: record.ports[id], host: '127.0.0.1', ...(tls ? { tls: tls.certificateOf(id) } : {}) },
        wal: { kind: 'file', dir: join(nodeDir, 'wal') },
        tokens: [{ token: record.token, principal: 'operator', scopes: ['admin', 'stream:append', 'stream:read'] }],
        ...(zone ? { labels: { zone } } : {}),
      },
      dataDir: nodeDir,
      consensus: {
        use: 'raft',
        options: { member: id, voters: ids, dataDir: join(nodeDir, 'raft') },
      },
      peerTransport: { use: 'raft-http-transport', options: { member: id, peers: urls } },
      peerAuth: peerAuthOf(record.peerSecrets, id, ids),
      objectStore: { use: 'fs-object-store', options: { dir: join(root, 'objects') } },
      log: { level: 'info', pretty: false },
    };
    configs.push(await writeNodeConfigFile(nodeDir, { id, url: urls[id], ...(tls ? { caFile: tls.caFile } : {}) }, config));
  }
  return configs;
}
