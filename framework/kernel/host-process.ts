import type { Host } from './host.js';
import { lockDirectory } from './directory-lock.js';

/** A host a process entry point started, and the line that tells where it answers. */
export interface StartedHostProcess {
  host: Host;
  /** Printed once the host listens, e.g. "stream node listening on http://127.0.0.1:7700". */
  listening: string;
  /** Runs after the host stopped (releases the data-dir lock). */
  afterStop?: () => Promise<void>;
}

export interface HostProcessSpec {
  /** What the process runs, in messages: "stream node", "authority node". */
  name: string;
  /** The compiled entry point, for the usage line: "hosts/stream-node/dist/main.js". */
  entryPoint: string;
  /** What `--help` prints after the usage line: what the config holds, where its reference is. */
  help?: string;
  /** Starts the host the config file describes. */
  start(configFile: string): Promise<StartedHostProcess>;
}

/** Exit codes of a host process: what a supervisor (or `baton up`) branches on. */
export const HostExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;

/**
 * What a host process tells a parent that spawned it with an IPC channel (`baton up`): the one
 * line that says why it did not start, instead of the parent guessing from the log.
 */
export type HostProcessReport = { type: 'listening'; line: string } | { type: 'start-failed'; message: string };

/**
 * The body of a host's process entry point, `node MAIN.js CONFIG.json`: starts the host the file
 * describes and stops it on SIGINT or SIGTERM, so a supervisor (or Ctrl-C) ends it with its logs
 * synced and its listeners closed. Exits 2 without a config file, 1 when the host does not start
 * or does not stop cleanly, 0 after a clean stop.
 *
 * Spawned with an IPC channel, the process also stops when that channel closes: the kernel
 * closes it when the parent dies, however it died (SIGKILL included), so a supervisor's nodes
 * never outlive it.
 */
export async function runHostProcess(spec: HostProcessSpec, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const usage = `usage: node ${spec.entryPoint} CONFIG.json (the ${spec.name} config file)`;
  const file = argv[0];
  if (file === '--help' || file === '-h') {
    process.stdout.write(`${usage}\n${spec.help ? `\n${spec.help}\n` : ''}`);
    process.exit(HostExitCode.Ok);
  }
  if (!file || file.startsWith('-') || argv.length > 1) {
    const why = !file ? 'no config file given' : file.startsWith('-') ? `unknown option ${file}` : `unexpected argument ${argv[1]}`;
    process.stderr.write(`${usage}\n${why}; --help says more\n`);
    process.exit(HostExitCode.Usage);
  }
  let started: StartedHostProcess | undefined;
  let stopping: Promise<void> | undefined;
  let stopRequested = false;
  const stop = (): void => {
    stopRequested = true;
    // Still starting: stopped as soon as the start completes.
    if (!started) return;
    const running = started;
    // Ctrl-C reaches the whole process group and a supervisor may signal as well: stop once.
    stopping ??= running.host
      .stop()
      .then(() => running.afterStop?.())
      .then(
        () => process.exit(HostExitCode.Ok),
        (error: unknown) => {
          process.stderr.write(`${spec.name} did not stop cleanly: ${messageOf(error)}\n`);
          process.exit(HostExitCode.Failed);
        },
      );
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
  if (process.channel) {
    // The channel must not keep the process alive on its own; its closing is the parent's death.
    process.channel.unref();
    process.once('disconnect', stop);
  }
  try {
    started = await spec.start(file);
  } catch (error) {
    const message = `${spec.name} failed to start: ${messageOf(error)}`;
    process.stderr.write(`${message}\n`);
    await report({ type: 'start-failed', message });
    process.exit(HostExitCode.Failed);
  }
  process.stdout.write(`${started.listening}\n`);
  await report({ type: 'listening', line: started.listening });
  if (stopRequested) stop();
}

/**
 * Runs a host's start with an exclusive lock on its data directory (`<dataDir>/node.lock`), so
 * a second process on the same directory refuses to start, naming the holder, instead of
 * writing the same WAL and Raft log. `null` (everything in memory) takes no lock.
 */
export async function withDataDirLock(
  dataDir: string | null,
  name: string,
  start: () => Promise<StartedHostProcess>,
): Promise<StartedHostProcess> {
  if (dataDir === null) return start();
  const lock = await lockDirectory(dataDir, {
    file: 'node.lock',
    inUse: (dir, pid) =>
      `data directory ${dir} is in use by another process (pid ${pid}, its lock ${dir}/node.lock): stop that ${name}, or give this one its own dataDir`,
  });
  let started: StartedHostProcess;
  try {
    started = await start();
  } catch (error) {
    await lock.release();
    throw error;
  }
  const previous = started.afterStop;
  return {
    ...started,
    afterStop: async () => {
      await previous?.();
      await lock.release();
    },
  };
}

/** Sends a report to the parent, if there is one listening; never fails the process. */
function report(message: HostProcessReport): Promise<void> {
  const send = process.send?.bind(process);
  if (!send || !process.connected) return Promise.resolve();
  return new Promise((resolve) => {
    try {
      send(message, undefined, {}, () => resolve());
    } catch {
      resolve();
    }
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
