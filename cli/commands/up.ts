import { Option, type Command } from 'commander';
import { FailedError, UsageError } from '../cli-errors.js';
import { outputFor, type CliContext } from '../context.js';
import {
  startLocalStreamCluster,
  type LocalStreamCluster,
} from '../local-cluster/local-stream-cluster.js';
import { StopSignals } from '../local-cluster/stop-signal.js';

/**
 * `baton up`: a local 3-node cluster of one variant, as three host processes on loopback. It
 * runs until Ctrl-C (or SIGTERM), then stops the nodes and keeps their data, so the next
 * `baton up` with the same --data-dir resumes at the same addresses with the same token.
 */
export function registerUp(program: Command, ctx: CliContext): void {
  program
    .command('up')
    .description(
      'start a local 3-node cluster of a variant on loopback (Ctrl-C stops it, data is kept)',
    )
    .addOption(
      new Option('--variant <variant>', 'which variant to run')
        .choices(['stream', 'authority'])
        .default('stream'),
    )
    .option('--data-dir <dir>', 'where the nodes keep their data', '.baton/data')
    .option(
      '--base-port <port>',
      'first of the three ports the nodes listen on (default: the ports recorded in the data dir, else free ports)',
    )
    .addHelpText(
      'after',
      `
The nodes are n1, n2 and n3: voters of one Raft over HTTP, each with its WAL and Raft log under
<data-dir>/<node>, sharing the object store <data-dir>/objects; their logs go to
<data-dir>/<node>/node.log. The ports and admin token are recorded in <data-dir>/cluster.json.

Examples:
  baton up
  baton up --data-dir /tmp/baton --base-port 7700`,
    )
    .action(
      async (
        options: { variant: string; dataDir: string; basePort?: string },
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        if (options.variant === 'authority') {
          throw new FailedError(
            'not-available',
            'baton up --variant authority is not available yet: run "baton up" (the stream variant) for a local cluster',
          );
        }
        const basePort = parseBasePort(options.basePort);
        const dataDir = options.dataDir;
        output.note(`starting 3 stream nodes (data in ${dataDir}) ...`);
        const signals = new StopSignals();
        try {
          await runUntilStopped(output, signals, dataDir, basePort);
        } finally {
          signals.dispose();
        }
      },
    );
}

async function runUntilStopped(
  output: ReturnType<typeof outputFor>,
  signals: StopSignals,
  dataDir: string,
  basePort: number | undefined,
): Promise<void> {
  const cluster = await startLocalStreamCluster({
    dataDir,
    interrupted: signals.signal,
    ...(basePort === undefined ? {} : { basePort }),
  });
  printEndpoints(output, cluster);
  const stopped = await signals.until(cluster.firstExit);
  if (stopped.kind === 'signal')
    output.note(`${stopped.signal}: stopping the nodes (data kept in ${dataDir}) ...`);
  const failures = await cluster.stop();
  if (stopped.kind === 'exit') {
    throw new FailedError(
      'node-exited',
      `node ${stopped.exit.id} exited (${stopped.exit.code}); the other nodes were stopped. Its last log lines:\n${stopped.exit.logTail}`,
    );
  }
  if (failures.length > 0) {
    throw new FailedError(
      'unclean-stop',
      `${failures.map((f) => `${f.id} exited with ${f.code}`).join(', ')}: see the node logs under ${dataDir}`,
    );
  }
  output.note('stopped; run "baton up" again with the same --data-dir to resume');
}

function parseBasePort(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65533) {
    throw new UsageError(
      `--base-port must be a port number from 1 to 65533 (three ports from it are used), got "${raw}"`,
    );
  }
  return port;
}

function printEndpoints(output: ReturnType<typeof outputFor>, cluster: LocalStreamCluster): void {
  const first = cluster.nodes[0].url;
  output.result(
    {
      variant: 'stream',
      resumed: cluster.resumed,
      dataDir: cluster.dataDir,
      token: cluster.token,
      nodes: cluster.nodes.map(({ id, url, logFile }) => ({ id, url, logFile })),
    },
    (data) => [
      `local stream cluster ${data.resumed ? 'resumed' : 'started'} (data: ${data.dataDir})`,
      ...data.nodes.map((node) => `  ${node.id}  ${node.url}   log: ${node.logFile}`),
      `admin token: ${data.token}`,
      '',
      'Try:',
      `  export BATON_URL=${first} BATON_TOKEN=${data.token}`,
      '  baton streams create events',
      '  baton streams append events hello world',
      '  baton streams read events',
      '  baton streams transfer events --to n2',
      '  baton streams nodes',
      `  curl -H "Authorization: Bearer ${data.token}" ${first}/v1/streams/events`,
      `  curl ${first}/metrics`,
      '',
      'Ctrl-C stops the cluster (data is kept; "baton up" again resumes).',
    ],
  );
}
