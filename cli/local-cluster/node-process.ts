import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { type HostProcessReport, SystemClock } from '@baton/kernel';

/** How long a node gets to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 20_000;

/** How a node process ended: its exit code, or the signal that ended it ("SIGKILL"). */
export type ExitStatus = number | string;

/** Whether a node came up: it reported listening, or it ended first and this is why. */
export type StartOutcome = { ok: true } | { ok: false; code: ExitStatus; cause: string };

/**
 * One host process of the local cluster, its output appended to a log file. It is spawned with
 * an IPC channel: the host stops when that channel closes, which the kernel does when this
 * process dies however it dies (SIGHUP, SIGKILL, a broken pipe), so a node never outlives its
 * `baton up`. The channel also carries the node's own reason when it fails to start.
 */
export class NodeProcess {
  private readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  readonly exited: Promise<ExitStatus>;
  /** Resolves once the node listens, or once it ended without doing so. */
  readonly started: Promise<StartOutcome>;
  private ended = false;
  private failure: string | undefined;

  constructor(
    readonly id: string,
    entryPoint: string,
    configFile: string,
    readonly logFile: string,
    /** A CA the node trusts for its outbound HTTPS (peers), added to Node's default ones. */
    caFile?: string,
    private readonly clock = new SystemClock(),
  ) {
    const log = openSync(logFile, 'a');
    try {
      // Its own process group: Ctrl-C reaches `baton up` alone, which then stops the nodes in
      // order instead of all of them racing to shut down at once.
      this.child = spawn(process.execPath, [entryPoint, configFile], {
        stdio: ['ignore', log, log, 'ipc'],
        detached: true,
        ...(caFile ? { env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile } } : {}),
      });
    } finally {
      closeSync(log);
    }
    // The channel must not hold `baton up` open by itself.
    this.child.channel?.unref();
    let listening: () => void = () => undefined;
    const heardListening = new Promise<void>((resolve) => (listening = resolve));
    this.child.on('message', (message: HostProcessReport) => {
      if (message?.type === 'listening') listening();
      if (message?.type === 'start-failed') this.failure = message.message;
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.ended = true;
        resolve(code ?? signal ?? 'unknown');
      });
      this.child.once('error', (error) => {
        this.ended = true;
        this.failure ??= error.message;
        resolve(error.message);
      });
    });
    this.started = Promise.race([
      heardListening.then((): StartOutcome => ({ ok: true })),
      this.exited.then((code): StartOutcome => ({ ok: false, code, cause: this.cause(code) })),
    ]);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.ended;
  }

  /** SIGTERM, then SIGKILL if the node has not stopped within the grace period. */
  async stop(): Promise<ExitStatus> {
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
    if (first !== timedOut) return first as ExitStatus;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGKILL at once: the node dies without shutting down, as in a crash. */
  async kill(): Promise<ExitStatus> {
    if (this.ended) return this.exited;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /**
   * Why the node ended, in one line: what it reported itself, else the failure its log names,
   * else how it ended. Never the log's stack traces.
   */
  cause(code: ExitStatus): string {
    return this.failure ?? failureInLog(this.logText()) ?? `exited (${code})`;
  }

  private logText(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }
}

/**
 * The last "failed to start" line a host wrote, else the message of its last fatal log entry
 * (pino level 60): one sentence out of a log that may hold pages of consequences.
 */
export function failureInLog(text: string): string | undefined {
  const lines = text.trimEnd().split('\n').reverse();
  const startFailure = lines.find((line) => / failed to start: /.test(line));
  if (startFailure) return startFailure.trim();
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 60) return entry.err?.message ?? entry.msg;
    } catch {
      // Not a log entry.
    }
  }
  return undefined;
}
