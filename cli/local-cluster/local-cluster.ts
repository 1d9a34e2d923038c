import { memberIdsOf, withPeerSecrets } from './peer-credentials.js';
import { SystemClock } from '@baton/kernel';
import { FailedError, UsageError } from '../cli-errors.js';
import {
  newAdminToken,
  readClusterRecord,
  writeClusterRecord,
  type ClusterRecord,
} from './cluster-record.js';
import { lockDataDir } from './data-dir-lock.js';
export type { NodeExit } from './node-supervisor.js';
import { freeLoopbackPorts } from './free-ports.js';
import { controlListenerTls } from './cluster-tls.js';
import { startControlServer } from './control-server.js';
import { NodeSupervisor, type NodeExit } from './node-supervisor.js';
import { fetchTrustingCa } from './fetch-trusting-ca.js';

/** How long the nodes get to elect a leader and answer as ready. */
const READY_TIMEOUT_MS = 60_000;

/** What every node process of a local cluster is started from. */
export interface LocalNodeConfig {
  id: string;
  /** The address a person or the CLI talks to first (a stream node's API, an authority node's control listener). */
  url: string;
  /** The config file the node process is started with. */
  file: string;
  /** Where the node process writes its logs. */
  logFile: string;
  /** The cluster CA its process trusts for peer traffic (NODE_EXTRA_CA_CERTS), when the members serve TLS. */
  caFile?: string;
}

/** What differs between the variants' local clusters; the rest (lock, record, processes) is shared. */
export interface LocalClusterVariant<N extends LocalNodeConfig> {
  variant: ClusterRecord['variant'];
  /** The compiled process entry point of the variant's host. */
  entryPoint: string;
  /** The record's port keys, in the order `--base-port` numbers them. */
  portKeys: readonly string[];
  /** Writes one config file per node (under the data dir) from the record. */
  writeConfigs(dataDir: string, record: ClusterRecord, options?: Pick<StartOptions, 'zones'>): Promise<N[]>;
  /**
   * True once the cluster can serve what `baton up` prints; false to be asked again. It may
   * update the record (e.g. what it set up on a first start), which is then written. It calls
   * the nodes through `fetch`, which trusts the cluster CA when they serve TLS.
   */
  ready(nodes: readonly N[], record: ClusterRecord, fetch: typeof globalThis.fetch): Promise<boolean | ClusterRecord>;
}

export interface StartOptions {
  dataDir: string;
  basePort?: number;
  /**
   * The members serve HTTPS (true) or plain HTTP (false); undefined keeps what the data dir's
   * record says (plain for a fresh one). Asking the other way than the record is a usage error.
   */
  tls?: boolean;
  /** Aborted (Ctrl-C) while the nodes start: they are stopped and the start fails. */
  interrupted?: AbortSignal;
  /** Stream nodes: the `zone` label of each node in turn (n1 the first, n2 the second...). */
  zones?: string[];
}

export interface LocalCluster<N extends LocalNodeConfig> {
  nodes: N[];
  record: ClusterRecord;
  dataDir: string;
  /** True when the data dir held a cluster already (its ports and token were reused). */
  resumed: boolean;
  /** How this process reaches the nodes: trusting the cluster CA when they serve TLS. */
  fetch: typeof fetch;
  /** The node processes: each can be stopped and started again on its own. */
  processes: NodeSupervisor;
  /** Calls `listener` whenever a node process ends without being asked to. */
  onNodeExit(listener: (exit: NodeExit) => void): void;
  /** Stops every node (last started first); resolves with the nodes that did not exit with 0. */
  stop(): Promise<{ id: string; code: number | string }[]>;
}

/**
 * Starts a variant's nodes as processes on loopback and waits until the variant calls them
 * ready. The data dir is locked while they run. Ports come from `basePort`, else from the data
 * dir's record (a restart answers where it did), else are chosen free; the admin token is the
 * recorded one, else a new one.
 */
export async function startLocalCluster<N extends LocalNodeConfig>(
  variant: LocalClusterVariant<N>,
  options: StartOptions,
): Promise<LocalCluster<N>> {
  const lock = await lockDataDir(options.dataDir);
  try {
    return await startLocked(variant, options, lock.release);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

async function startLocked<N extends LocalNodeConfig>(
  variant: LocalClusterVariant<N>,
  options: StartOptions,
  releaseLock: () => Promise<void>,
): Promise<LocalCluster<N>> {
  const previous = await readClusterRecord(options.dataDir);
  if (previous && previous.variant !== variant.variant) {
    throw new FailedError(
      'variant-mismatch',
      `${options.dataDir} holds a local ${previous.variant} cluster: run "baton up --variant ${previous.variant}", or choose another --data-dir`,
    );
  }
  const tls = servesTls(options, previous);
  let record: ClusterRecord = {
    ...previous,
    ...(tls ? { tls } : {}),
    variant: variant.variant,
    ports: await choosePorts(variant.portKeys, options.basePort, previous),
    token: previous?.token ?? newAdminToken(),
    // What the nodes present to one another, where the variant's peers authenticate.
    peerToken: previous?.peerToken ?? newAdminToken(),
    // Each member's own credential on the peer plane (peer-credentials.ts).
    peerSecrets: withPeerSecrets(previous?.peerSecrets, memberIdsOf(variant.portKeys)),
  };
  await writeClusterRecord(options.dataDir, record);
  const configs = await variant.writeConfigs(options.dataDir, record, options);
  // `baton node` sends the admin token to the control listener: over TLS when the members serve TLS.
  const controlTls = await controlListenerTls(options.dataDir, record);
  const caFile = configs[0]?.caFile;
  const nodeFetch = caFile ? fetchTrustingCa(caFile) : fetch;

  const listeners = new Set<(exit: NodeExit) => void>();
  const processes = new NodeSupervisor(variant.entryPoint, configs, (exit) => {
    for (const listener of listeners) listener(exit);
  });
  let control: { close(): Promise<void> } | undefined;
  const stop = async (): Promise<{ id: string; code: number | string }[]> => {
    await control?.close();
    const failures = await processes.stopAll();
    await releaseLock();
    return failures;
  };
  let firstExit: (exit: NodeExit) => void = () => undefined;
  const exitedWhileStarting = new Promise<NodeExit>((resolve) => (firstExit = resolve));
  listeners.add(firstExit);
  try {
    for (const id of processes.ids) void processes.start(id);
    const updated = await waitUntilReady(
      () => variant.ready(configs, record, nodeFetch),
      configs,
      exitedWhileStarting,
      options.interrupted,
    );
    listeners.delete(firstExit);
    if (updated) {
      record = updated;
      await writeClusterRecord(options.dataDir, record);
    }
    control = await startControlServer(options.dataDir, variant.variant, record.token, processes, controlTls);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes: configs,
    record,
    dataDir: options.dataDir,
    resumed: previous !== undefined,
    fetch: nodeFetch,
    processes,
    onNodeExit: (listener) => void listeners.add(listener),
    stop,
  };
}

/** Whether the members serve TLS: as asked, else as recorded; a change of a recorded cluster is refused. */
function servesTls(options: StartOptions, previous: ClusterRecord | undefined): boolean {
  const recorded = previous?.tls === true;
  if (previous === undefined || options.tls === undefined || options.tls === recorded) return options.tls ?? recorded;
  throw new UsageError(
    recorded
      ? `${options.dataDir} holds a local cluster whose members serve TLS: run baton up without --no-tls, or choose another --data-dir`
      : `${options.dataDir} holds a local cluster whose members serve plain HTTP: run baton up without --tls, or choose another --data-dir (or remove it to start a TLS cluster)`,
  );
}

async function choosePorts(
  keys: readonly string[],
  basePort: number | undefined,
  previous: ClusterRecord | undefined,
): Promise<Record<string, number>> {
  const ports =
    basePort !== undefined
      ? keys.map((_, i) => basePort + i)
      : previous && keys.every((key) => previous.ports[key] !== undefined)
        ? keys.map((key) => previous.ports[key])
        : await freeLoopbackPorts(keys.length);
  if (ports.some((port) => port > 65535)) {
    throw new FailedError(
      'bad-ports',
      `${keys.length} ports from --base-port ${basePort} run past 65535: give at most ${65536 - keys.length}`,
    );
  }
  return Object.fromEntries(keys.map((key, i) => [key, ports[i]]));
}

/**
 * Asks `ready` until it answers, a node exits, Ctrl-C comes or the deadline passes; resolves
 * with the record `ready` updated, if it did.
 */
async function waitUntilReady(
  ready: () => Promise<boolean | ClusterRecord>,
  configs: readonly LocalNodeConfig[],
  firstExit: Promise<NodeExit>,
  interrupted?: AbortSignal,
): Promise<ClusterRecord | undefined> {
  const clock = new SystemClock();
  let exited: NodeExit | undefined;
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
        `node ${exited.id} exited (${exited.code}) while the cluster was starting: ${exited.cause} (its log: ${configs.find((c) => c.id === exited?.id)?.logFile})`,
      );
    }
    const answer = await ready().catch(() => false);
    // A Ctrl-C that came while the nodes were being asked wins over their answer.
    if (interrupted?.aborted) continue;
    if (answer !== false) return answer === true ? undefined : answer;
    if (clock.now() > deadline) {
      throw new FailedError(
        'cluster-not-ready',
        `the nodes did not all come up within ${READY_TIMEOUT_MS / 1000}s: see their logs (${configs.map((c) => c.logFile).join(', ')})`,
      );
    }
    await clock.sleep(100);
  }
}
