import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalNodeConfig } from './local-cluster.js';

/**
 * Writes `<nodeDir>/config.json` for one node of a local cluster; its process logs to
 * `<nodeDir>/node.log`, next to the data it keeps there.
 */
export async function writeNodeConfigFile(
  nodeDir: string,
  node: { id: string; url: string },
  config: unknown,
): Promise<LocalNodeConfig> {
  await mkdir(nodeDir, { recursive: true });
  const file = join(nodeDir, 'config.json');
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
  return { id: node.id, url: node.url, file, logFile: join(nodeDir, 'node.log') };
}
