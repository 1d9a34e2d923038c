import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { SystemClock } from '../../framework/kernel/system-clock.js';

/** How long a node gets to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 20_000;

/** One host process of the local cluster, its output appended to a log file. */
export class NodeProcess {
  private readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  readonly exited: Promise<number | string>;
  private ended = false;

  constructor(
    readonly id: string,
    entryPoint: string,
    configFile: string,
    readonly logFile: string,
    private readonly clock = new SystemClock(),
  ) {
    const log = openSync(logFile, 'a');
    try {
      // Its own process group: Ctrl-C reaches `baton up` alone, which then stops the nodes in
      // order instead of all of them racing to shut down at once.
      this.child = spawn(process.execPath, [entryPoint, configFile], {
        stdio: ['ignore', log, log],
        detached: true,
      });
    } finally {
      closeSync(log);
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.ended = true;
        resolve(code ?? signal ?? 'unknown');
      });
      this.child.once('error', (error) => {
        this.ended = true;
        resolve(error.message);
      });
    });
  }

  get running(): boolean {
    return !this.ended;
  }

  /** SIGTERM, then SIGKILL if the node has not stopped within the grace period. */
  async stop(): Promise<number | string> {
    if (this.ended) return this.exited;
    this.child.kill('SIGTERM');
    const timedOut = Symbol('timed out');
    // The grace timer is cancelled as soon as the node is gone, or it would hold `baton up` open.
    const grace = new AbortController();
    const first = await Promise.race([
      this.exited,
      this.clock.sleep(STOP_GRACE_MS, grace.signal).then(
        () => timedOut,
        () => timedOut,
      ),
    ]);
    grace.abort();
    if (first !== timedOut) return first as number | string;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGKILL at once: the node dies without shutting down, as in a crash. */
  async kill(): Promise<number | string> {
    if (this.ended) return this.exited;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** The last lines the node wrote: what to show when it failed. */
  logTail(lines = 15): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log written)';
    }
  }
}
