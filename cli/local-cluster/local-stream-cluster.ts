import { fileURLToPath } from 'node:url';
import { SystemClock } from '../../framework/kernel/system-clock.js';
import { StreamClient } from '../../framework/stream-transfer/client.js';
import { FailedError } from '../cli-errors.js';
import {
  LOCAL_NODE_IDS,
  newAdminToken,
  readClusterRecord,
  writeClusterRecord,
  type ClusterRecord,
} from './cluster-record.js';
import { lockDataDir } from './data-dir-lock.js';
import { freeLoopbackPorts } from './free-ports.js';
import { NodeProcess } from './node-process.js';
import { writeStreamNodeConfigs, type LocalNodeConfig } from './stream-node-configs.js';

/** The compiled stream-node entry point, next to this file in dist/. */
const STREAM_NODE_MAIN = fileURLToPath(new URL('../../hosts/stream-node/main.js', import.meta.url));

/** How long the nodes get to elect a leader and register themselves. */
const READY_TIMEOUT_MS = 60_000;

export interface StartOptions {
  dataDir: string;
  basePort?: number;
  /** Aborted (Ctrl-C) while the nodes start: they are stopped and the start fails. */
  interrupted?: AbortSignal;
}

export interface LocalStreamCluster {
  nodes: LocalNodeConfig[];
  token: string;
  dataDir: string;
  /** True when the data dir held a cluster already (its ports and token were reused). */
  resumed: boolean;
  /** Resolves when any node process ends on its own, naming it. */
  firstExit: Promise<{ id: string; code: number | string; logTail: string }>;
  /** Stops every node (last started first); resolves with the nodes that did not exit with 0. */
  stop(): Promise<{ id: string; code: number | string }[]>;
}

/**
 * Starts three stream nodes as processes on loopback, voters of one Raft over HTTP, and waits
 * until every node answers and lists all three as registered. Ports come from `basePort`, else
 * from the data dir's record (a restart answers where it did), else are chosen free.
 */
export async function startLocalStreamCluster(options: StartOptions): Promise<LocalStreamCluster> {
  const lock = await lockDataDir(options.dataDir);
  try {
    return await startLocked(options, lock.release);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

async function startLocked(
  options: StartOptions,
  releaseLock: () => Promise<void>,
): Promise<LocalStreamCluster> {
  const previous = await readClusterRecord(options.dataDir);
  if (previous && previous.variant !== 'stream') {
    throw new FailedError(
      'variant-mismatch',
      `${options.dataDir} holds a local ${previous.variant} cluster: run "baton up --variant ${previous.variant}", or choose another --data-dir`,
    );
  }
  const ports =
    options.basePort !== undefined
      ? LOCAL_NODE_IDS.map((_, i) => options.basePort! + i)
      : previous
        ? LOCAL_NODE_IDS.map((id) => previous.ports[id])
        : await freeLoopbackPorts(LOCAL_NODE_IDS.length);
  if (ports.some((port) => port === undefined || port > 65535)) {
    throw new FailedError(
      'bad-ports',
      `no valid ports for nodes ${LOCAL_NODE_IDS.join(', ')}: give --base-port PORT (at most ${65535 - 2})`,
    );
  }
  const record: ClusterRecord = {
    variant: 'stream',
    ports: Object.fromEntries(LOCAL_NODE_IDS.map((id, i) => [id, ports[i]])),
    token: previous?.token ?? newAdminToken(),
  };
  await writeClusterRecord(options.dataDir, record);
  const configs = await writeStreamNodeConfigs(options.dataDir, record);

  const processes = configs.map(
    (config) => new NodeProcess(config.id, STREAM_NODE_MAIN, config.file, config.logFile),
  );
  const stop = async (): Promise<{ id: string; code: number | string }[]> => {
    const failures: { id: string; code: number | string }[] = [];
    for (const node of [...processes].reverse()) {
      const code = await node.stop();
      if (code !== 0) failures.push({ id: node.id, code });
    }
    await releaseLock();
    return failures;
  };
  const firstExit = Promise.race(
    processes.map((node) =>
      node.exited.then((code) => ({ id: node.id, code, logTail: node.logTail() })),
    ),
  );
  try {
    await waitUntilReady(configs, record.token, firstExit, options.interrupted);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes: configs,
    token: record.token,
    dataDir: options.dataDir,
    resumed: previous !== undefined,
    firstExit,
    stop,
  };
}

/** Every node answers and sees all three registered, or a node exits, or the deadline passes. */
async function waitUntilReady(
  configs: readonly LocalNodeConfig[],
  token: string,
  firstExit: Promise<{ id: string; code: number | string; logTail: string }>,
  interrupted?: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  let exited: { id: string; code: number | string; logTail: string } | undefined;
  void firstExit.then((exit) => (exited = exit));
  const deadline = clock.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (interrupted?.aborted) {
      throw new FailedError(
        'interrupted',
        'interrupted while the cluster was starting: the nodes were stopped, their data kept',
      );
    }
    if (exited) {
      throw new FailedError(
        'node-exited',
        `node ${exited.id} exited (${exited.code}) while the cluster was starting; its last log lines:\n${exited.logTail}`,
      );
    }
    if (await allRegistered(configs, token)) return;
    if (clock.now() > deadline) {
      throw new FailedError(
        'cluster-not-ready',
        `the nodes did not all come up within ${READY_TIMEOUT_MS / 1000}s: see their logs (${configs.map((c) => c.logFile).join(', ')})`,
      );
    }
    await clock.sleep(100);
  }
}

async function allRegistered(configs: readonly LocalNodeConfig[], token: string): Promise<boolean> {
  const ids = configs.map((config) => config.id);
  for (const config of configs) {
    try {
      const { nodes } = await new StreamClient({ nodes: [config.url], token }).nodes();
      if (!ids.every((id) => nodes.some((node) => node.id === id))) return false;
    } catch {
      // Not listening yet, or no leader yet: keep waiting.
      return false;
    }
  }
  return true;
}
