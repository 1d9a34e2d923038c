import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '@baton/contracts';
import { SystemClock } from '@baton/kernel';
import { freeLoopbackPort, LOOPBACK, PortInUseError, ServerProcess } from './server-process.js';

export interface EtcdClusterOptions {
  /** How many members (1 for a single node, 3 for a cluster that survives one loss). Default 1. */
  size?: number;
  /** The etcd executable (default: $ETCD_BINARY, else `etcd` on the PATH). */
  binary?: string;
  /** Time source for start/stop deadlines (default: the system clock). */
  clock?: Clock;
  /** How long to wait for every member to serve clients (default 20 s). */
  startTimeoutMs?: number;
  /**
   * Raft heartbeat and election timeouts. Short defaults (50/500 ms) so tests that kill a member
   * see a new leader within a second instead of etcd's production 100/1000 ms.
   */
  heartbeatMs?: number;
  electionMs?: number;
  /** More `--flag=value` arguments for every member. */
  extraArgs?: string[];
}

const PORT_ATTEMPTS = 5;
/** What etcd 3.4 (zap logger) prints once it serves clients: after it joined its cluster. */
const READY_LINE = /serving client traffic|ready to serve client requests/;

/**
 * One etcd process of a test cluster: its own ports and data directory. Killing it and starting
 * it again keeps the directory, so it comes back with what it had synced, as after a crash.
 */
export class EtcdMember {
  private process?: ServerProcess;
  /** The latest run, kept after it exits so its output can still be read. */
  private lastRun?: ServerProcess;

  constructor(
    readonly name: string,
    readonly clientPort: number,
    readonly peerPort: number,
    readonly dataDir: string,
    private readonly cluster: EtcdCluster,
  ) {}

  get clientUrl(): string {
    return `http://${LOOPBACK}:${this.clientPort}`;
  }

  get peerUrl(): string {
    return `http://${LOOPBACK}:${this.peerPort}`;
  }

  get running(): boolean {
    return this.process !== undefined;
  }

  /** What the process printed (the tail is quoted in start errors). */
  get log(): string {
    return this.lastRun?.output ?? '';
  }

  /**
   * SIGTERM is a clean shutdown; SIGKILL is a crash (etcd fsyncs its WAL before it acknowledges,
   * so nothing acknowledged is lost). Stopping a stopped member does nothing.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await this.process?.stop(signal);
  }

  kill(): Promise<void> {
    return this.stop('SIGKILL');
  }

  get isPaused(): boolean {
    return this.process?.isPaused ?? false;
  }

  /**
   * SIGSTOP: the member keeps its sockets and its place in the cluster but answers nothing, as
   * under a long stall; its peers elect another leader when it led. `resume` sends SIGCONT.
   */
  pause(): void {
    this.process?.pause();
  }

  resume(): void {
    this.process?.resume();
  }

  /** Starts the member again on its ports and data directory, and waits until it serves clients. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Spawns the process and waits for it to serve clients (in a cluster, that needs a quorum). */
  async start(): Promise<void> {
    this.spawnProcess();
    await this.ready();
  }

  /** @internal Spawns without waiting: cluster members must start together to form a quorum. */
  spawnProcess(): void {
    if (this.process) throw new Error(`etcd member ${this.name} is already running`);
    const settings = this.cluster.settings;
    const args = [
      `--name=${this.name}`,
      `--data-dir=${this.dataDir}`,
      `--listen-client-urls=${this.clientUrl}`,
      `--advertise-client-urls=${this.clientUrl}`,
      `--listen-peer-urls=${this.peerUrl}`,
      `--initial-advertise-peer-urls=${this.peerUrl}`,
      `--initial-cluster=${this.cluster.initialCluster}`,
      `--initial-cluster-token=${this.cluster.token}`,
      '--initial-cluster-state=new',
      `--heartbeat-interval=${settings.heartbeatMs}`,
      `--election-timeout=${settings.electionMs}`,
      '--logger=zap',
      '--log-outputs=stderr',
      ...settings.extraArgs,
    ];
    const run = new ServerProcess(settings.binary, args, settings.clock, () => {
      if (this.process === run) this.process = undefined;
    });
    this.process = run;
    this.lastRun = run;
  }

  /** @internal Resolves once the member serves clients; rejects when it exits or times out. */
  async ready(): Promise<void> {
    const run = this.lastRun;
    if (!run) throw new Error(`etcd member ${this.name} was never started`);
    const outcome = await run.waitForOutput(READY_LINE, this.cluster.settings.startTimeoutMs);
    if (outcome === 'ready') return;
    await this.stop('SIGKILL');
    const { spawnError, output } = run;
    if (spawnError) {
      throw new Error(
        `could not run ${this.cluster.settings.binary} (${spawnError.message}): install etcd (Debian: etcd-server) or set ETCD_BINARY to its path`,
        { cause: spawnError },
      );
    }
    if (run.addressInUse) {
      throw new PortInUseError(
        `etcd member ${this.name} could not bind its port: address already in use`,
      );
    }
    throw new Error(
      outcome === 'timeout'
        ? `etcd member ${this.name} did not serve clients within ${this.cluster.settings.startTimeoutMs} ms:\n${output.slice(-4000)}`
        : `etcd member ${this.name} exited before serving clients:\n${output.slice(-4000)}`,
    );
  }
}

interface EtcdClusterSettings {
  binary: string;
  clock: Clock;
  startTimeoutMs: number;
  heartbeatMs: number;
  electionMs: number;
  extraArgs: string[];
}

/**
 * A real etcd for tests: one member or several, each on free loopback ports with its own temporary
 * data directory, started together so they form one cluster. Members can be stopped, killed and
 * restarted one by one to test what a client sees when etcd loses a member or its only node.
 */
export class EtcdCluster {
  readonly members: EtcdMember[] = [];
  readonly token: string;

  private constructor(
    readonly dir: string,
    /** @internal */
    readonly settings: EtcdClusterSettings,
    ports: number[],
    attempt: number,
    size: number,
  ) {
    this.token = `baton-test-${attempt}-${ports[0]}`;
    for (let i = 0; i < size; i++) {
      this.members.push(
        new EtcdMember(
          `m${i + 1}`,
          ports[2 * i],
          ports[2 * i + 1],
          join(dir, `m${i + 1}-attempt${attempt}`),
          this,
        ),
      );
    }
  }

  static async start(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
    const size = options.size ?? 1;
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`an etcd cluster needs at least one member, got size ${size}`);
    }
    const settings: EtcdClusterSettings = {
      binary: options.binary ?? process.env.ETCD_BINARY ?? 'etcd',
      clock: options.clock ?? new SystemClock(),
      startTimeoutMs: options.startTimeoutMs ?? 20_000,
      heartbeatMs: options.heartbeatMs ?? 50,
      electionMs: options.electionMs ?? 500,
      extraArgs: options.extraArgs ?? [],
    };
    const dir = await mkdtemp(join(tmpdir(), 'baton-etcd-'));
    let lastError: unknown;
    for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      const ports = await distinctFreePorts(2 * size);
      const cluster = new EtcdCluster(dir, settings, ports, attempt, size);
      try {
        for (const member of cluster.members) member.spawnProcess();
        await Promise.all(cluster.members.map((member) => member.ready()));
        return cluster;
      } catch (error) {
        lastError = error;
        await Promise.all(cluster.members.map((member) => member.stop('SIGKILL')));
        // Another process took a port between probing and binding: try other ones.
        if (!(error instanceof PortInUseError)) break;
      }
    }
    await rm(dir, { recursive: true, force: true });
    throw lastError;
  }

  /** The client URLs of every member, for the etcd client's `hosts`. */
  get endpoints(): string[] {
    return this.members.map((member) => member.clientUrl);
  }

  get initialCluster(): string {
    return this.members.map((member) => `${member.name}=${member.peerUrl}`).join(',');
  }

  member(index: number): EtcdMember {
    const member = this.members[index];
    if (!member) {
      throw new RangeError(`no etcd member ${index}: the cluster has ${this.members.length}`);
    }
    return member;
  }

  /** Stops every member and removes all data directories. */
  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.stop()));
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freeLoopbackPort());
  return [...ports];
}
