import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { settledWithin } from '@baton/conformance/internal/servers/server-process.js';
import type { ProcessIdentity } from './member-identity.js';

/** How long a clean stop may take before the process is killed. */
const STOP_GRACE_MS = 10_000;
/** How much of the end of a member's log a failure quotes. */
const LOG_TAIL_BYTES = 4_096;

/**
 * One member of a nemesis cluster as a real OS process: `node ENTRY CONFIG`, its output appended
 * to a log file that outlives every run of it, so a failed history can be read next to what each
 * member said. It can be killed (-9) and started again on the same data, paused (SIGSTOP) and
 * resumed. It runs under its own uid when the runner has one to give (see member-identity.ts):
 * that is what lets a firewall rule name the member's own packets.
 */
export class MemberProcess {
  private child?: ChildProcess;
  private exitedRun?: Promise<void>;
  private paused = false;
  private runs = 0;
  /** How the last run ended, once it has. */
  private lastExit?: string;
  private readonly clock = new SystemClock();

  constructor(
    readonly id: string,
    private readonly entryPoint: string,
    private readonly configFile: string,
    readonly logFile: string,
    private readonly identity?: ProcessIdentity,
    /** The file mode mask the process starts with (a shared directory needs group-writable files). */
    private readonly umask?: number,
  ) {}

  get running(): boolean {
    return this.child !== undefined;
  }

  /** The running process's id (what a watcher of its files stops and kills), if it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Resolves when the running process exits (a start it refused, say); undefined when none runs. */
  get exited(): Promise<void> | undefined {
    return this.child ? this.exitedRun : undefined;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Spawns the process (a restart keeps the data dir and appends to the same log). */
  start(): void {
    if (this.child) throw new Error(`member ${this.id} is already running`);
    this.runs += 1;
    const log = openSync(this.logFile, 'a');
    try {
      writeSync(
        log,
        `--- nemesis: start #${this.runs} of ${this.id} at ${new Date().toISOString()}\n`,
      );
      // A child inherits the umask at spawn: set it for that instant only (spawn is synchronous).
      const previousUmask = this.umask === undefined ? undefined : process.umask(this.umask);
      let child: ChildProcess;
      try {
        child = spawn(process.execPath, [this.entryPoint, this.configFile], {
          stdio: ['ignore', log, log],
          ...(this.identity ? { uid: this.identity.uid, gid: this.identity.gid } : {}),
        });
      } finally {
        if (previousUmask !== undefined) process.umask(previousUmask);
      }
      this.child = child;
      this.paused = false;
      this.exitedRun = new Promise<void>((resolve) => {
        const done = (how: string) => {
          if (this.child === child) this.child = undefined;
          this.lastExit = how;
          resolve();
        };
        child.once('exit', (code, signal) => done(signal ? `killed by ${signal}` : `exited with code ${code}`));
        child.once('error', (error) => done(`could not run: ${error.message}`));
      });
      liveMembers.add(child);
      void this.exitedRun.then(() => liveMembers.delete(child));
      installExitHook();
    } finally {
      closeSync(log);
    }
  }

  /**
   * `work`, unless this run of the process ends first: then it fails at once with how it ended
   * and the end of its log, instead of waiting out a deadline on a process that is gone (a
   * member that cannot start says why in its log).
   */
  async whileRunning<T>(work: Promise<T>): Promise<T> {
    const exited = this.child ? this.exitedRun! : Promise.resolve();
    const gone = exited.then(async () => {
      throw new Error(`member ${this.id} is not running (${this.lastExit ?? 'never started'}); the end of its log:\n${await this.logTail()}`);
    });
    gone.catch(() => undefined);
    return Promise.race([work, gone]);
  }

  private async logTail(): Promise<string> {
    const file = await open(this.logFile, 'r');
    try {
      const { size } = await file.stat();
      const start = Math.max(0, size - LOG_TAIL_BYTES);
      const buffer = Buffer.alloc(size - start);
      await file.read(buffer, 0, buffer.length, start);
      return buffer.toString('utf8');
    } finally {
      await file.close();
    }
  }

  /** A crash: SIGKILL, nothing flushed that was not already on disk. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    this.paused = false;
    await this.exitedRun;
  }

  /** SIGSTOP: the process keeps its sockets but runs no code, as under a long GC or VM stall. */
  pause(): void {
    if (!this.child || this.paused) return;
    this.child.kill('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    if (!this.child || !this.paused) return;
    this.child.kill('SIGCONT');
    this.paused = false;
  }

  /** A clean stop (SIGTERM; a paused process is resumed first), killed if it takes too long. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.resume();
    child.kill('SIGTERM');
    if (!(await settledWithin(this.clock, this.exitedRun!, STOP_GRACE_MS))) await this.kill();
  }
}

/** Members still running when the runner exits (a failed assertion, Ctrl-C) are killed, never left behind. */
const liveMembers = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of liveMembers) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
  });
}
