import type { Command } from 'commander';
import { stringify as toYaml } from 'yaml';
import { MILLISECONDS_HELP, SECONDS_HELP, durationMs } from '../arguments.js';
import { CliError } from '../cli-errors.js';
import { resolveAccess } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import type { HumanView, Output } from '../output.js';
import { answeredPicture, DEFAULT_URLS, pictureAddresses, stateOf, type ClusterStatus } from '../status/cluster-picture.js';
import { table } from '../table.js';
import { shortBuild, versionMix } from '../status/versions.js';
import { SystemClock } from '@baton/kernel';

/** How often --watch refreshes when it is given no interval. */
const DEFAULT_WATCH_MS = 2000;
/** How long each address gets to answer unless --timeout says otherwise. */
const DEFAULT_TIMEOUT_MS = 5000;

/** The cluster answered, but is not whole: what is wrong, one clause per problem. */
export class UnhealthyError extends CliError {
  constructor(readonly problems: readonly string[]) {
    super('unhealthy', `the cluster is unhealthy: ${problems.join('; ')}`, ExitCode.Unhealthy);
  }
}

/** `baton status`: the cluster at a glance, like `etcdctl endpoint status` or `patronictl list`. */
export function registerStatus(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description('show the cluster at a glance: members, leader, term, indexes, liveness, counts, transfers in flight')
    .option(
      '--url <urls>',
      "address of a stream node's API or an authority node's control listener; several, comma-separated, are tried in turn " +
        `(default: $BATON_URL, else the context's, else ${DEFAULT_URLS.join(', ')})`,
    )
    .option('--token <token>', 'bearer token with the admin (stream) or admin:read (authority) scope (default: $BATON_TOKEN, else the context\'s)')
    .option('--timeout <duration>', `how long each address gets to answer (default 5 s; ${SECONDS_HELP})`, durationMs('s'))
    .option('-w, --watch [interval]', `refresh until Ctrl-C, every interval (default 2 s; ${MILLISECONDS_HELP})`, durationMs('ms', 100))
    .addHelpText(
      'after',
      `
The member asked assembles the picture: it asks every other member for its own report (with
your token) and lists those that do not answer as down, with the reason. For the authority
variant each member is shown with its public address (peers and writes) and its control
address (what --url takes), as each member reports it.

Exit codes: 0 when every member is up and ready and there is a leader; 4 (unhealthy) when the
picture shows a member down or not ready, or no leader (it is still printed); 3 when no address
given answers. A script or a cron job can use "baton status" as a health check.

--watch redraws the picture in place on a terminal, and prints each refresh otherwise (with
-o json one document per line, with -o yaml one YAML document each); it ends with Ctrl-C, exit 0.

Examples:
  baton status
  baton status --watch
  baton status --url http://127.0.0.1:7700,http://127.0.0.1:7701 --json`,
    )
    .action(async (_local: unknown, command: Command) => {
      // --url and --token are global options too: given before or after `status`, they land there.
      const options = command.optsWithGlobals<{ timeout?: number; watch?: number | true }>();
      const timeoutMs = options.timeout ?? DEFAULT_TIMEOUT_MS;
      const output = outputFor(ctx, command);
      const access = resolveAccess(ctx, command);
      const urls = pictureAddresses(access.url, access.from);
      const read = async () => {
        const { picture, url } = await answeredPicture(urls, access.token, timeoutMs, access.fetch);
        // The address that answered is the control listener of the member that served it.
        return { picture, controlOf: { [picture.servedBy]: url } };
      };
      if (options.watch !== undefined) {
        const interval = options.watch === true ? DEFAULT_WATCH_MS : options.watch;
        await watch(ctx, output, read, interval);
        return;
      }
      const { picture, controlOf } = await read();
      output.result(picture, (p, view) => humanLines(p, view, controlOf));
      const problems = healthProblems(picture);
      if (problems.length > 0) throw new UnhealthyError(problems);
    });
}

/**
 * Reads and shows the picture every `intervalMs` until Ctrl-C (or SIGTERM). On a terminal each
 * reading replaces the last on screen; otherwise each is printed after the last, with its time.
 * A reading that fails is shown as such, and the watch goes on.
 */
async function watch(
  ctx: CliContext,
  output: Output,
  read: () => Promise<{ picture: ClusterStatus; controlOf: Record<string, string> }>,
  intervalMs: number,
): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const clock = new SystemClock();
  const terminal = ctx.stdout.isTTY === true && !output.machine;
  try {
    while (!stop.signal.aborted) {
      const at = new Date().toISOString();
      let lines: string[];
      let document: unknown;
      try {
        const { picture, controlOf } = await read();
        const problems = healthProblems(picture);
        document = { at, healthy: problems.length === 0, problems, picture };
        lines = [...humanLines(picture, { headers: true, wide: output.format === 'wide' }, controlOf), problems.length === 0 ? 'healthy' : `UNHEALTHY: ${problems.join('; ')}`];
      } catch (error) {
        document = { at, error: (error as Error).message };
        lines = [`no picture: ${(error as Error).message}`];
      }
      if (output.format === 'yaml') ctx.stdout.write(`---\n${toYaml(document)}`);
      else if (output.machine) ctx.stdout.write(`${JSON.stringify(document)}\n`);
      else if (terminal) ctx.stdout.write(`\x1b[H\x1b[2J${at}  every ${intervalMs} ms, Ctrl-C stops\n${lines.join('\n')}\n`);
      else ctx.stdout.write(`--- ${at}\n${lines.join('\n')}\n`);
      try {
        await clock.sleep(intervalMs, stop.signal);
      } catch {
        break;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** What keeps the picture from being healthy: no leader, a member down, a member not ready. */
export function healthProblems(p: ClusterStatus): string[] {
  const problems: string[] = [];
  if (!p.leader) problems.push('no leader');
  for (const m of p.members) {
    if (!m.reachable) problems.push(`${m.id} is down${m.error ? ` (${m.error})` : ''}`);
    else if (m.report && !m.report.ready) problems.push(`${m.id} is not ready (${m.report.notReady?.reason ?? 'unknown'})`);
  }
  return problems;
}

function humanLines(p: ClusterStatus, view: HumanView, controlOf: Record<string, string>): string[] {
  const dash = (value: number | string | null | undefined) => (value === null || value === undefined || value === '' ? '-' : String(value));
  const authority = p.variant === 'authority';
  const rows = p.members.map((m) => {
    const r = m.report;
    return [
      m.id,
      dash(m.address),
      // The address that answered for the serving member; each other member says its own.
      ...(authority ? [dash(controlOf[m.id] ?? r?.controlAddress)] : []),
      stateOf(m),
      r ? r.role : '-',
      dash(r?.term),
      dash(r?.commitIndex),
      dash(r?.appliedIndex),
      // The usual delay and the worst one of the window: one long block shows beside a quiet p99.
      r ? `${r.eventLoopDelay.p99Ms.toFixed(1)} / ${r.eventLoopDelay.maxMs.toFixed(1)} ms` : '-',
      r ? (r.ready ? 'ready' : `not ready: ${r.notReady?.reason ?? 'unknown'}`) : (m.error ?? ''),
      r ? r.version : '-',
      ...(view.wide ? [dash(r?.leader), String(r?.recentTransfers.length ?? '-'), r ? shortBuild(r.build) : '-', r ? r.nodeVersion : '-'] : []),
    ];
  });
  const counts = Object.entries(p.counts).map(([name, count]) => `${count} ${name}`).join(', ');
  const transfers = p.transfersInFlight;
  const header = [
    'MEMBER',
    ...(authority ? ['PUBLIC ADDRESS', 'CONTROL ADDRESS'] : ['ADDRESS']),
    'STATE',
    'ROLE',
    'TERM',
    'COMMIT',
    'APPLIED',
    'LOOP P99 / MAX',
    'READY',
    'VERSION',
    ...(view.wide ? ['FOLLOWS', 'RECENT TRANSFERS', 'BUILD', 'NODE'] : []),
  ];
  const mix = versionMix(p);
  return [
    `${p.variant} cluster, seen from ${p.servedBy}: ${p.leader ? `leader ${p.leader}` : 'NO LEADER'}, term ${p.term}`,
    ...table(header, rows, view),
    `${counts}; ${transfers.count} transfer${transfers.count === 1 ? '' : 's'} in flight`,
    ...transfers.shown.map((t) => `  ${transferLine(t)}`),
    ...(transfers.count > transfers.shown.length ? [`  ... and ${transfers.count - transfers.shown.length} more`] : []),
    ...p.members.flatMap(catchingUpLines),
    ...(authority ? ['public addresses serve peers and writes; admin commands take a control address as --url'] : []),
    ...(mix ? [`WARNING: ${mix}`] : []),
  ];
}

/** A member home of authorities it refuses writes for until it holds their moves' final serials. */
function catchingUpLines(m: ClusterStatus['members'][number]): string[] {
  const homes = m.report?.homesCatchingUp;
  if (!homes || homes.count === 0) return [];
  return [
    `${m.id} is catching up as the new home of ${homes.count} authorit${homes.count === 1 ? 'y' : 'ies'} (writes there answer 503 until it holds the finals):`,
    ...homes.shown.map((h) => `  ${h.authority} (epoch ${h.epoch}): ${h.source} final ${h.final}, held ${h.held}`),
    ...(homes.count > homes.shown.length ? [`  ... and ${homes.count - homes.shown.length} more`] : []),
  ];
}

/** A stream transfer (stream, source, target, reason) or an authority plan (authority, source, target, state). */
function transferLine(t: Record<string, unknown>): string {
  const what = String(t.stream ?? t.authority ?? '?');
  const detail = t.state ? `${String(t.state)}, barrier ${String(t.barrier)}, target at ${t.frontier === null ? 'no reading yet' : String(t.frontier)}` : String(t.reason ?? '');
  return `${what}: ${String(t.source)} -> ${String(t.target)} (${detail})`;
}
