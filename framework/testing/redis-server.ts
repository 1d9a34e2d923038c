import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../contracts/clock.js';
import { SystemClock } from '../kernel/system-clock.js';

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

const HOST = '127.0.0.1';
const PORT_ATTEMPTS = 5;

/**
 * A real redis-server for tests, spawned on a free loopback port with its own temporary
 * directory. Data is kept in an append-only file synced on every write, so a server stopped (even
 * with SIGKILL) and restarted on the same port comes back with everything it acknowledged:
 * exactly what a client sees across a Redis restart in production.
 */
export class RedisServer {
  private child?: ChildProcess;
  private exited?: Promise<void>;

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
    return HOST;
  }

  get url(): string {
    return `${this.options.tls ? 'rediss' : 'redis'}://${HOST}:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /**
   * Stops the server. SIGTERM lets Redis finish and exit cleanly; SIGKILL is a crash (the
   * append-only file still holds every acknowledged write). Stopping a stopped server does nothing.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill(signal);
    const stopped = await this.within(this.exited!, 10_000);
    if (!stopped) {
      child.kill('SIGKILL');
      await this.exited;
    }
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
    if (this.child) throw new Error(`redis-server on port ${this.port} is already running`);
    const tls = this.options.tls;
    const listen = tls
      ? ['--port', '0', '--tls-port', String(this.port), '--tls-cert-file', tls.certFile]
      : ['--port', String(this.port)];
    if (tls) listen.push('--tls-key-file', tls.keyFile, '--tls-auth-clients', 'no');
    const common = [...listen, '--bind', HOST, '--daemonize', 'no', '--logfile', ''];
    let args: string[];
    let readyMarker: string;
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
      readyMarker = '+monitor master';
    } else {
      args = [
        ...common,
        ...['--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
        ...['--protected-mode', 'no'],
        ...this.options.extraArgs,
      ];
      readyMarker = 'Ready to accept connections';
    }
    const child = spawn(this.options.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const ready = new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes(readyMarker)) {
          child.stdout?.off('data', onData);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => void (output += chunk.toString('utf8')));
    });
    let spawnError: Error | undefined;
    const exited = new Promise<void>((resolve) => {
      const done = () => {
        if (this.child === child) this.child = undefined;
        liveChildren.delete(child);
        resolve();
      };
      child.once('exit', done);
      child.once('error', (error) => {
        spawnError = error;
        done();
      });
    });
    this.child = child;
    this.exited = exited;
    watchForExit(child);

    const abort = new AbortController();
    const timedOut = this.options.clock.sleep(this.options.startTimeoutMs, abort.signal).then(
      () => 'timeout' as const,
      () => 'cancelled' as const,
    );
    const outcome = await Promise.race([
      ready.then(() => 'ready' as const),
      exited.then(() => 'exited' as const),
      timedOut,
    ]);
    abort.abort();
    if (outcome === 'ready') return;
    await this.stop('SIGKILL');
    if (spawnError) {
      throw new Error(
        `could not run ${this.options.binary} (${spawnError.message}): install Redis or set REDIS_SERVER to its path`,
        { cause: spawnError },
      );
    }
    if (/address already in use/i.test(output)) throw new PortInUseError(this.port);
    throw new Error(
      outcome === 'timeout'
        ? `redis-server on port ${this.port} was not ready after ${this.options.startTimeoutMs} ms:\n${output}`
        : `redis-server on port ${this.port} exited before it was ready:\n${output}`,
    );
  }

  /** True when `promise` settled before the deadline. */
  private async within(promise: Promise<unknown>, ms: number): Promise<boolean> {
    const abort = new AbortController();
    const deadline = this.options.clock.sleep(ms, abort.signal).then(
      () => false,
      () => false,
    );
    const settled = await Promise.race([promise.then(() => true), deadline]);
    abort.abort();
    return settled;
  }
}

/** Servers still running when the test process exits are killed, never left behind. */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function watchForExit(child: ChildProcess): void {
  liveChildren.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const live of liveChildren) live.kill('SIGKILL');
  });
}

class PortInUseError extends Error {
  constructor(readonly port: number) {
    super(`port ${port} is already in use`);
  }
}

/**
 * A loopback port that was free a moment ago. It is released before use, so another process can
 * take it first; RedisServer.start retries on "address in use".
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      if (address === null || typeof address === 'string') {
        probe.close();
        reject(new Error(`could not learn the port bound on ${HOST}`));
        return;
      }
      probe.close(() => resolve(address.port));
    });
  });
}
