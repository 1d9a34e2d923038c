import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '@baton/contracts';
import { SystemClock } from '@baton/kernel';
import { freeLoopbackPort, LOOPBACK, PortInUseError, ServerProcess } from './server-process.js';

/** Kept here too: tests and benches import it from this module. */
export { freeLoopbackPort } from './server-process.js';

export interface RedisServerOptions {
  /** The redis-server executable (default: $REDIS_SERVER, else `redis-server` on the PATH). */
  binary?: string;
  /** Time source for start/stop deadlines (default: the system clock). */
  clock?: Clock;
  /** How long to wait for "Ready to accept connections" (default 10 s). */
  startTimeoutMs?: number;
  /** More `--name value` arguments for redis-server. */
  extraArgs?: string[];
  /**
   * Run a Redis Sentinel instead of a data server, watching the master `name` at host:port
   * (quorum 1, down after 500 ms, so a test sees a failover within seconds).
   */
  sentinelFor?: { name: string; host: string; port: number };
  /** Serve TLS only, with this PEM certificate and key (clients are not asked for one). */
  tls?: { certFile: string; keyFile: string };
}

type ResolvedOptions = Required<Omit<RedisServerOptions, 'sentinelFor' | 'tls'>> &
  Pick<RedisServerOptions, 'sentinelFor' | 'tls'>;

const PORT_ATTEMPTS = 5;

/**
 * A real redis-server for tests, spawned on a free loopback port with its own temporary
 * directory. Data is kept in an append-only file synced on every write, so a server stopped (even
 * with SIGKILL) and restarted on the same port comes back with everything it acknowledged:
 * exactly what a client sees across a Redis restart in production.
 */
export class RedisServer {
  private process?: ServerProcess;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly options: ResolvedOptions,
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const resolved: ResolvedOptions = {
      binary: options.binary ?? process.env.REDIS_SERVER ?? 'redis-server',
      clock: options.clock ?? new SystemClock(),
      startTimeoutMs: options.startTimeoutMs ?? 10_000,
      extraArgs: options.extraArgs ?? [],
      sentinelFor: options.sentinelFor,
      tls: options.tls,
    };
    const dir = await mkdtemp(join(tmpdir(), 'baton-redis-'));
    let lastError: unknown;
    for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      const server = new RedisServer(await freeLoopbackPort(), dir, resolved);
      try {
        await server.spawn();
        return server;
      } catch (error) {
        lastError = error;
        // Another process took the port between probing and binding: try another one.
        if (!(error instanceof PortInUseError)) break;
      }
    }
    await rm(dir, { recursive: true, force: true });
    throw lastError;
  }

  get host(): string {
    return LOOPBACK;
  }

  get url(): string {
    return `${this.options.tls ? 'rediss' : 'redis'}://${LOOPBACK}:${this.port}`;
  }

  get running(): boolean {
    return this.process !== undefined;
  }

  /**
   * Stops the server. SIGTERM lets Redis finish and exit cleanly; SIGKILL is a crash (the
   * append-only file still holds every acknowledged write). Stopping a stopped server does nothing.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await this.process?.stop(signal);
  }

  /** Starts the server again on the same port and directory, with the data it had. */
  async restart(): Promise<void> {
    await this.stop();
    await this.spawn();
  }

  /** Stops the server and removes its directory. */
  async close(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async spawn(): Promise<void> {
    if (this.process) throw new Error(`redis-server on port ${this.port} is already running`);
    const tls = this.options.tls;
    const listen = tls
      ? ['--port', '0', '--tls-port', String(this.port), '--tls-cert-file', tls.certFile]
      : ['--port', String(this.port)];
    if (tls) listen.push('--tls-key-file', tls.keyFile, '--tls-auth-clients', 'no');
    const common = [...listen, '--bind', LOOPBACK, '--daemonize', 'no', '--logfile', ''];
    let args: string[];
    let readyMarker: RegExp;
    const sentinel = this.options.sentinelFor;
    if (sentinel) {
      // Sentinel keeps its state in its config file, so it needs one it may rewrite.
      const config = join(this.dir, 'sentinel.conf');
      if (!existsSync(config)) {
        await writeFile(
          config,
          [
            `sentinel monitor ${sentinel.name} ${sentinel.host} ${sentinel.port} 1`,
            `sentinel down-after-milliseconds ${sentinel.name} 500`,
            `sentinel failover-timeout ${sentinel.name} 5000`,
            '',
          ].join('\n'),
        );
      }
      args = [config, '--sentinel', ...common, ...this.options.extraArgs];
      readyMarker = /\+monitor master/;
    } else {
      args = [
        ...common,
        ...['--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
        ...['--protected-mode', 'no'],
        ...this.options.extraArgs,
      ];
      readyMarker = /Ready to accept connections/;
    }
    const server = new ServerProcess(this.options.binary, args, this.options.clock, () => {
      if (this.process === server) this.process = undefined;
    });
    this.process = server;
    const outcome = await server.waitForOutput(readyMarker, this.options.startTimeoutMs);
    if (outcome === 'ready') return;
    await this.stop('SIGKILL');
    const { spawnError, output } = server;
    if (spawnError) {
      throw new Error(
        `could not run ${this.options.binary} (${spawnError.message}): install Redis or set REDIS_SERVER to its path`,
        { cause: spawnError },
      );
    }
    if (server.addressInUse) throw new PortInUseError(`port ${this.port} is already in use`);
    throw new Error(
      outcome === 'timeout'
        ? `redis-server on port ${this.port} was not ready after ${this.options.startTimeoutMs} ms:\n${output}`
        : `redis-server on port ${this.port} exited before it was ready:\n${output}`,
    );
  }
}
