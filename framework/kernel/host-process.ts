import type { Host } from './host.js';

/** A host a process entry point started, and the line that tells where it answers. */
export interface StartedHostProcess {
  host: Host;
  /** Printed once the host listens, e.g. "stream node listening on http://127.0.0.1:7700". */
  listening: string;
}

export interface HostProcessSpec {
  /** What the process runs, in messages: "stream node", "authority node". */
  name: string;
  /** The compiled entry point, for the usage line: "dist/hosts/stream-node/main.js". */
  entryPoint: string;
  /** Starts the host the config file describes. */
  start(configFile: string): Promise<StartedHostProcess>;
}

/** Exit codes of a host process: what a supervisor (or `baton up`) branches on. */
export const HostExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;

/**
 * The body of a host's process entry point, `node MAIN.js CONFIG.json`: starts the host the file
 * describes and stops it on SIGINT or SIGTERM, so a supervisor (or Ctrl-C) ends it with its logs
 * synced and its listeners closed. Exits 2 without a config file, 1 when the host does not start
 * or does not stop cleanly, 0 after a clean stop.
 */
export async function runHostProcess(
  spec: HostProcessSpec,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const file = argv[0];
  if (!file) {
    process.stderr.write(
      `usage: node ${spec.entryPoint} CONFIG.json (the ${spec.name} config file)\n`,
    );
    process.exit(HostExitCode.Usage);
  }
  let started: StartedHostProcess;
  try {
    started = await spec.start(file);
  } catch (error) {
    process.stderr.write(`${spec.name} failed to start: ${messageOf(error)}\n`);
    process.exit(HostExitCode.Failed);
  }
  process.stdout.write(`${started.listening}\n`);
  let stopping: Promise<void> | undefined;
  const stop = (): void => {
    // Ctrl-C reaches the whole process group and a supervisor may signal as well: stop once.
    stopping ??= started.host.stop().then(
      () => process.exit(HostExitCode.Ok),
      (error: unknown) => {
        process.stderr.write(`${spec.name} did not stop cleanly: ${messageOf(error)}\n`);
        process.exit(HostExitCode.Failed);
      },
    );
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
