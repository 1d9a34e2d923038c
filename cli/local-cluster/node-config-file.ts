import { join } from 'node:path';
import type { LocalNodeConfig } from './local-cluster.js';
import { privateDirectory, writePrivateFile } from './private-files.js';

/**
 * Writes `<nodeDir>/config.json` for one node of a local cluster; its process logs to
 * `<nodeDir>/node.log`, next to the data it keeps there. The config holds the node's tokens and
 * peer secret: the file is 0600 and the node's directory 0700.
 */
export async function writeNodeConfigFile(
  nodeDir: string,
  node: { id: string; url: string; caFile?: string },
  config: unknown,
): Promise<LocalNodeConfig> {
  await privateDirectory(nodeDir);
  const file = join(nodeDir, 'config.json');
  await writePrivateFile(file, `${JSON.stringify(config, null, 2)}\n`);
  return { id: node.id, url: node.url, file, logFile: join(nodeDir, 'node.log'), ...(node.caFile ? { caFile: node.caFile } : {}) };
}
