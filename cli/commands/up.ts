import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { FailedError, UsageError } from '../cli-errors.js';
import { outputFor, type CliContext } from '../context.js';
import { AUTHORITY_PORT_KEYS } from '../local-cluster/authority-node-configs.js';
import { LOCAL_NODE_IDS } from '../local-cluster/cluster-record.js';
import { startLocalAuthorityCluster } from '../local-cluster/local-authority-cluster.js';
import type { LocalCluster, LocalNodeConfig } from '../local-cluster/local-cluster.js';
import { startLocalStreamCluster } from '../local-cluster/local-stream-cluster.js';
import { StopSignals } from '../local-cluster/stop-signal.js';
import { printAuthorityCluster, printStreamCluster } from './up-summary.js';
import { batonInvocation } from '../invocation.js';
import { shellWord } from '../shell-word.js';
import { saveUpContext } from '../user-config.js';

type Output = ReturnType<typeof outputFor>;
type Variant = 'stream' | 'authority';

/** How many ports from --base-port each variant's three nodes take. */
const PORTS_USED: Record<Variant, number> = {
  stream: LOCAL_NODE_IDS.length,
  authority: AUTHORITY_PORT_KEYS.length,
};

/**
 * `baton up`: a local 3-node cluster of one variant, as three host processes on loopback. It
 * runs until Ctrl-C (or SIGTERM, SIGHUP), then stops the nodes and keeps their data, so the next
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
    .option(
      '--data-dir <dir>',
      'where the nodes keep their data (the authority variant in its authority/ subdirectory)',
      '.baton/data',
    )
    .option(
      '--base-port <port>',
      'first of the ports the nodes listen on, 3 for stream, 6 for authority (default: the ports recorded in the data dir, else free ports)',
    )
    .option(
      '--tls',
      'serve every listener, clients and peers, over HTTPS with certificates of a cluster CA generated in the data dir (default: as recorded there, else plain HTTP)',
    )
    .option('--no-tls', 'serve plain HTTP (refused for a data dir whose cluster serves TLS)')
    .option('--zones <zones>', 'stream: label the nodes zone=<each of these, comma-separated> in turn (n1 the first, n2 the second...)')
    .addHelpText(
      'after',
      `
stream: nodes n1, n2 and n3, voters of one Raft over HTTP, each with its WAL and Raft log under
<data-dir>/<node>, sharing the object store <data-dir>/objects.

authority: members east-1, west-1 and north-1, one per datacenter (east, west, north), in mode
ha, voters of one Raft over HTTP on their public servers; each keeps its Raft log, change feed
and audit under <data-dir>/authority/<member>. \`baton authority\` talks to their control
listeners. A first start places the authority "proj" in east, so there is something to move.

Each node logs to <node dir>/node.log. The ports and admin token are recorded in cluster.json
in the variant's data dir, so a restart answers at the same addresses with the same token.

--tls: every member serves its listeners over https:// with a certificate of a CA made for the
cluster (openssl generates it once under tls/ in the variant's data dir, keys 0600; a restart
keeps it, and keeps TLS). Clients trust that CA: the printed "export NODE_EXTRA_CA_CERTS=.../
tls/ca.pem" does it for baton and node, curl takes --cacert. Peers still prove who they are with their own
secrets. A data dir keeps the choice it was first started with: --tls on a plain cluster (or
--no-tls on a TLS one) is refused.

Examples:
  baton up
  baton up --data-dir /tmp/baton --base-port 7700
  baton up --variant authority
  baton up --tls
  baton up --zones z1,z2,z3   (n1 in zone z1, n2 in z2, n3 in z3)`,
    )
    .action(
      async (
        options: { variant: Variant; dataDir: string; basePort?: string; tls?: boolean; zones?: string },
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        const basePort = parseBasePort(options.basePort, PORTS_USED[options.variant]);
        const zones = parseZones(options.zones, options.variant);
        // `npm start` asks first whether the arguments hold, before it spends a build on them.
        if (ctx.env.BATON_CHECK_ARGS === '1') return;
        // Kept apart, so the two variants' clusters never read each other's record or lock.
        const dataDir =
          options.variant === 'authority' ? join(options.dataDir, 'authority') : options.dataDir;
        output.note(`starting 3 ${options.variant} nodes (data in ${dataDir}) ...`);
        const signals = new StopSignals();
        const baton = batonInvocation(ctx);
        const restart = restartCommand(baton, options, command);
        // The context of this cluster, made current, so the commands printed need no token typed.
        const saveContext = (url: string, token: string, caFile: string | undefined) =>
          saveUpContext(ctx.env, {
            variant: options.variant,
            dataDirOption: options.dataDir,
            dataDir: resolve(ctx.cwd, dataDir),
            isDefaultDataDir: command.getOptionValueSource('dataDir') === 'default',
            url,
            token,
            ...(caFile ? { caFile } : {}),
          }).catch((error: unknown) => {
            output.note(`the context of this cluster was not saved: ${(error as Error).message}`);
            return undefined;
          });
        try {
          const start = { dataDir, interrupted: signals.signal, basePort, tls: options.tls, ...(zones ? { zones } : {}) };
          if (options.variant === 'authority') {
            const cluster = await startLocalAuthorityCluster(start);
            await runUntilStopped(output, signals, cluster, async () => {
              const context = await saveContext(cluster.nodes[0].url, cluster.record.token, cluster.nodes[0].caFile);
              await printAuthorityCluster(output, cluster, baton, { restart, context });
            });
          } else {
            const cluster = await startLocalStreamCluster(start);
            await runUntilStopped(output, signals, cluster, async () => {
              const context = await saveContext(cluster.nodes[0].url, cluster.record.token, cluster.nodes[0].caFile);
              printStreamCluster(output, cluster, baton, { restart, context });
            });
          }
        } finally {
          signals.dispose();
        }
      },
    );
}

/**
 * Prints the endpoints, then runs until Ctrl-C, SIGTERM or SIGHUP and stops the nodes. A node
 * that dies meanwhile is reported and left down (it is not restarted by itself): the others
 * keep serving, and `baton node start NAME` brings it back.
 */
async function runUntilStopped(
  output: Output,
  signals: StopSignals,
  cluster: LocalCluster<LocalNodeConfig>,
  printEndpoints: () => void | Promise<void>,
): Promise<void> {
  try {
    await printEndpoints();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  cluster.onNodeExit((exit) =>
    output.note(
      `node ${exit.id} ${exit.cause === `exited (${exit.code})` ? exit.cause : `exited (${exit.code}): ${exit.cause}`}. The other nodes keep running; "baton node start ${exit.id}" starts it again.`,
    ),
  );
  const signal = await signals.next();
  output.note(`${signal}: stopping the nodes (data kept in ${cluster.dataDir}) ...`);
  const failures = await cluster.stop();
  if (failures.length > 0) {
    throw new FailedError(
      'unclean-stop',
      `${failures.map((f) => `${f.id} exited with ${f.code}`).join(', ')}: see the node logs under ${cluster.dataDir}`,
    );
  }
  output.note('stopped; run the same baton up again (same --data-dir) to resume');
}

/** `baton up` with the options that name this cluster (data dir, variant), so it resumes as started. */
function restartCommand(baton: string, options: { variant: Variant; dataDir: string }, command: Command): string {
  const words = [`${baton} up`];
  if (command.getOptionValueSource('dataDir') !== 'default') words.push(`--data-dir ${shellWord(options.dataDir)}`);
  if (options.variant !== 'stream') words.push(`--variant ${options.variant}`);
  return words.join(' ');
}

/** --zones z1,z2,z3: label values, one per node in turn; only the stream variant's nodes take labels. */
function parseZones(raw: string | undefined, variant: Variant): string[] | undefined {
  if (raw === undefined) return undefined;
  if (variant !== 'stream') throw new UsageError('--zones labels stream nodes: the authority variant places by datacenter (its roster)');
  const zones = raw.split(',').map((zone) => zone.trim());
  const bad = zones.find((zone) => !/^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/.test(zone));
  if (bad !== undefined) {
    throw new UsageError(`--zones takes label values separated by commas (1-63 letters, digits, ".", "_" or "-" each), got "${bad}" in "${raw}"`);
  }
  return zones;
}

function parseBasePort(raw: string | undefined, used: number): number | undefined {
  if (raw === undefined) return undefined;
  const port = Number(raw);
  const highest = 65536 - used;
  if (!Number.isInteger(port) || port < 1 || port > highest) {
    throw new UsageError(
      `--base-port must be a port number from 1 to ${highest} (${used} ports from it are used), got "${raw}"`,
    );
  }
  return port;
}
