import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { eventually } from '../hosts/eventually.js';
import { testPeerAuth } from '../support/peer-auth.js';
import { cleanEnv } from './processes.js';

export const CLUSTER_TOKEN = 'registry-test-admin-token';

export interface HostProcess {
  id: string;
  url: string;
  /** The line the start script printed once the host ran. */
  running: string;
  output(): string;
}

/**
 * One config per member of a three-node stream cluster of a generated host: voters of one Raft
 * over HTTP on loopback, each proving itself to the others (peer secrets), every node's WAL and
 * Raft log its own, the object store shared (as one bucket would be).
 */
function memberConfig(
  id: string,
  ids: readonly string[],
  urls: Record<string, string>,
  ports: Record<string, number>,
  dataDir: string,
) {
  return {
    node: {
      self: id,
      address: urls[id],
      http: { port: ports[id], host: '127.0.0.1' },
      wal: { kind: 'file', dir: join(dataDir, id, 'wal') },
      tokens: [
        {
          token: CLUSTER_TOKEN,
          principal: 'operator',
          scopes: ['admin', 'stream:append', 'stream:read'],
        },
      ],
    },
    consensus: { member: id, voters: ids, dataDir: join(dataDir, id, 'raft') },
    peerTransport: { member: id, peers: urls },
    peerAuth: testPeerAuth(id, ids),
    objectStore: { dir: join(dataDir, 'objects') },
    metrics: { labels: { node: id } },
    auditStore: {},
    log: { level: 'warn' },
  };
}

/**
 * Starts the host built in `hostDir` (`node dist/src/main.js --config ...`, what `npm start`
 * runs) as three processes, and waits until each says it runs. They are killed in teardown.
 */
export async function startHostProcesses(
  t: { teardown(fn: () => Promise<void> | void): void },
  hostDir: string,
  dataDir: string,
  ids: readonly string[] = ['n1', 'n2', 'n3'],
): Promise<HostProcess[]> {
  const free = await freeLoopbackPorts(ids.length);
  const ports = Object.fromEntries(ids.map((id, i) => [id, free[i]]));
  const urls = Object.fromEntries(ids.map((id) => [id, `http://127.0.0.1:${ports[id]}`]));
  await mkdir(dataDir, { recursive: true });
  const started = ids.map(async (id): Promise<HostProcess> => {
    const config = join(dataDir, `${id}.json`);
    await writeFile(config, JSON.stringify(memberConfig(id, ids, urls, ports, dataDir), null, 2));
    const child = spawn(process.execPath, ['dist/src/main.js', '--config', config], {
      cwd: hostDir,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let exited: string | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const closed = new Promise<void>((resolve) =>
      child.on('close', (code, signal) => {
        exited = signal ?? String(code);
        resolve();
      }),
    );
    t.teardown(async () => {
      if (exited === undefined) child.kill('SIGKILL');
      await closed;
    });
    const runningLine = () => /^.* is running: .*$/m.exec(output)?.[0];
    await eventually(
      () => exited !== undefined || runningLine() !== undefined,
      `${id} to start`,
      60_000,
    );
    const running = runningLine();
    if (!running) throw new Error(`${id} exited (${exited}) before it ran:\n${output}`);
    return { id, url: urls[id], running, output: () => output };
  });
  return Promise.all(started);
}
