import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ClusterRecord } from './cluster-record.js';

export interface LocalNodeConfig {
  id: string;
  url: string;
  /** The config file the node process is started with. */
  file: string;
  /** Where the node process writes its logs. */
  logFile: string;
}

/**
 * Writes one stream-node config per node: the three are voters of one Raft that talks HTTP on
 * the nodes' own listeners; each keeps its Raft log and WAL under `<dataDir>/<id>`, and all share
 * the object store `<dataDir>/objects`, as nodes sharing one bucket do, so a stream handed to
 * another node reads its sealed segments there.
 */
export async function writeStreamNodeConfigs(
  dataDir: string,
  record: ClusterRecord,
): Promise<LocalNodeConfig[]> {
  const root = resolve(dataDir);
  const ids = Object.keys(record.ports);
  const urls = Object.fromEntries(ids.map((id) => [id, `http://127.0.0.1:${record.ports[id]}`]));
  const configs: LocalNodeConfig[] = [];
  for (const id of ids) {
    const nodeDir = join(root, id);
    await mkdir(nodeDir, { recursive: true });
    const config = {
      node: {
        self: id,
        address: urls[id],
        http: { port: record.ports[id], host: '127.0.0.1' },
        wal: { kind: 'file', dir: join(nodeDir, 'wal') },
        tokens: [{ token: record.token, principal: 'operator', scopes: ['admin'] }],
      },
      dataDir: nodeDir,
      consensus: {
        use: 'raft',
        options: { member: id, voters: ids, dataDir: join(nodeDir, 'raft') },
      },
      peerTransport: { use: 'raft-http-transport', options: { member: id, peers: urls } },
      objectStore: { use: 'fs-object-store', options: { dir: join(root, 'objects') } },
      log: { level: 'info', pretty: false },
    };
    const file = join(nodeDir, 'config.json');
    await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
    configs.push({ id, url: urls[id], file, logFile: join(nodeDir, 'node.log') });
  }
  return configs;
}
