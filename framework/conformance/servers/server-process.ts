import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { Clock } from '@baton/contracts';

/** Every test server listens on loopback only. */
export const LOOPBACK = '127.0.0.1';

/** How long a stop waits for a clean exit before it kills the process. */
const STOP_GRACE_MS = 10_000;
/** Only the tail of a process's output is kept: a long-running server logs a lot. */
const OUTPUT_TAIL = 20_000;

/**
 * One run of a real server executable (redis-server, etcd) for tests: its output collected, its
 * exit or failure to spawn observed, and killed when the test process exits, never left behind.
 */
export class ServerProcess {
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;
  private text = '';
  private gone = false;
  private error?: Error;
  private readonly listeners = new Set<() => void>();
  private stopped = false;

  /**
   * @param onExit called once the process has exited (or could not be spawned), before `exited`
   *   resolves, so the owner can forget it.
   */
  constructor(
    binary: string,
    args: readonly string[],
    private readonly clock: Clock,
    onExit: () => void = () => undefined,
  ) {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const append = (chunk: Buffer) => {
      this.text = (this.text + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
      this.notify();
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    this.exited = new Promise<void>((resolve) => {
      const done = () => {
        liveChildren.delete(child);
        this.gone = true;
        onExit();
        this.notify();
        resolve();
      };
      child.once('exit', done);
      child.once('error', (error) => {
        this.error = error;
        done();
      });
    });
    this.child = child;
    watchForExit(child);
  }

  /** The tail of what the process printed on stdout and stderr. */
  get output(): string {
    return this.text;
  }

  /** Why the process could not be run at all (executable missing...), once it is known. */
  get spawnError(): Error | undefined {
    return this.error;
  }

  /** True when the process said it could not bind its port (another process took it). */
  get addressInUse(): boolean {
    return /address already in use/i.test(this.text);
  }

  get running(): boolean {
    return !this.gone;
  }

  get isPaused(): boolean {
    return this.stopped;
  }

  /** SIGSTOP: the process keeps its sockets but runs no code, as under a long GC or VM stall. */
  pause(): void {
    if (this.gone || this.stopped) return;
    this.child.kill('SIGSTOP');
    this.stopped = true;
  }

  resume(): void {
    if (this.gone || !this.stopped) return;
    this.child.kill('SIGCONT');
    this.stopped = false;
  }

  /**
   * Waits until the output shows `ready`, the process exits, or `timeoutMs` passes on the clock.
   * Checked again on every output chunk and at exit.
   */
  async waitForOutput(ready: RegExp, timeoutMs: number): Promise<'ready' | 'exited' | 'timeout'> {
    const check = () => (ready.test(this.text) ? 'ready' : this.gone ? 'exited' : undefined);
    const first = check();
    if (first !== undefined) return first;
    let wake!: () => void;
    const answered = new Promise<'ready' | 'exited'>((resolve) => {
      wake = () => {
        const answer = check();
        if (answer !== undefined) resolve(answer);
      };
      this.listeners.add(wake);
    });
    const abort = new AbortController();
    const deadline = this.clock.sleep(timeoutMs, abort.signal).then(
      () => 'timeout' as const,
      () => 'timeout' as const,
    );
    try {
      return await Promise.race([answered, deadline]);
    } finally {
      abort.abort();
      this.listeners.delete(wake);
    }
  }

  /**
   * SIGTERM asks for a clean exit (a paused process is resumed first); SIGKILL is a crash. A process that does not exit within the
   * grace period is killed. Stopping an exited process does nothing.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    if (this.gone) return;
    // A stopped process handles no SIGTERM until it runs again.
    if (signal === 'SIGTERM') this.resume();
    this.child.kill(signal);
    if (!(await settledWithin(this.clock, this.exited, STOP_GRACE_MS))) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }

  private notify(): void {
    for (const wake of [...this.listeners]) wake();
  }
}

/** True when `promise` settled before `ms` passed on the clock. */
export async function settledWithin(
  clock: Clock,
  promise: Promise<unknown>,
  ms: number,
): Promise<boolean> {
  const abort = new AbortController();
  const deadline = clock.sleep(ms, abort.signal).then(
    () => false,
    () => false,
  );
  const settled = await Promise.race([promise.then(() => true), deadline]);
  abort.abort();
  return settled;
}

/** A server could not bind a port it was given: another process took it after it was probed. */
export class PortInUseError extends Error {}

/**
 * A loopback port that was free a moment ago. It is released before use, so another process can
 * take it first; a server that starts on it retries on "address in use".
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, LOOPBACK, () => {
      const address = probe.address();
      if (address === null || typeof address === 'string') {
        probe.close();
        reject(new Error(`could not learn the port bound on ${LOOPBACK}`));
        return;
      }
      probe.close(() => resolve(address.port));
    });
  });
}

/** Processes still running when the test process exits are killed, never left behind. */
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
