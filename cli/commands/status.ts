import type { Command } from 'commander';
import { integerAtLeast } from '../arguments.js';
import { UsageError } from '../cli-errors.js';
import { outputFor, type CliContext } from '../context.js';
import { fetchClusterPicture, stateOf, type ClusterStatus } from '../status/cluster-picture.js';
import { table } from '../table.js';

/** The addresses `baton up` gives each variant's first node, tried when nothing else is said. */
const DEFAULT_URLS = ['http://127.0.0.1:7700', 'http://127.0.0.1:7601'];

/** `baton status`: the cluster at a glance, like `etcdctl endpoint status` or `patronictl list`. */
export function registerStatus(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description('show the cluster at a glance: members, leader, term, indexes, liveness, counts, transfers in flight')
    .option(
      '--url <urls>',
      "address of a stream node's API or an authority node's control listener; several, comma-separated, are tried in turn " +
        `(default: $BATON_URL, else ${DEFAULT_URLS.join(', ')})`,
    )
    .option('--token <token>', 'bearer token with the admin (stream) or admin:read (authority) scope (default: $BATON_TOKEN)')
    .option('--timeout <seconds>', 'how long each address gets to answer', integerAtLeast(1), 5)
    .addHelpText(
      'after',
      `
The member asked assembles the picture: it asks every other member for its own report (with
your token) and lists those that do not answer as down, with the reason. Exit code 3 when no
address given answers.

Examples:
  baton status
  baton status --url http://127.0.0.1:7700,http://127.0.0.1:7701 --json`,
    )
    .action(async (_local: { timeout: number }, command: Command) => {
      // --url and --token are global options too: given before or after `status`, they land there.
      const options = command.optsWithGlobals<{ url?: string; token?: string; timeout: number }>();
      const output = outputFor(ctx, command);
      const urls = addresses(options.url ?? nonEmpty(ctx.env.BATON_URL), options.url !== undefined ? '--url' : 'BATON_URL');
      const token = options.token ?? nonEmpty(ctx.env.BATON_TOKEN);
      const picture = await fetchClusterPicture(urls, token, options.timeout * 1000);
      output.result(picture, humanLines);
    });
}

function humanLines(p: ClusterStatus): string[] {
  const dash = (value: number | string | null | undefined) => (value === null || value === undefined ? '-' : String(value));
  const rows = p.members.map((m) => {
    const r = m.report;
    return [
      m.id,
      dash(m.address),
      stateOf(m),
      r ? r.role : '-',
      dash(r?.term),
      dash(r?.commitIndex),
      dash(r?.appliedIndex),
      // The usual delay and the worst one of the window: one long block shows beside a quiet p99.
      r ? `${r.eventLoopDelay.p99Ms.toFixed(1)} / ${r.eventLoopDelay.maxMs.toFixed(1)} ms` : '-',
      r ? (r.ready ? 'ready' : `not ready: ${r.notReady?.reason ?? 'unknown'}`) : (m.error ?? ''),
    ];
  });
  const counts = Object.entries(p.counts).map(([name, count]) => `${count} ${name}`).join(', ');
  const transfers = p.transfersInFlight;
  return [
    `${p.variant} cluster, seen from ${p.servedBy}: ${p.leader ? `leader ${p.leader}` : 'NO LEADER'}, term ${p.term}`,
    ...table(['MEMBER', 'ADDRESS', 'STATE', 'ROLE', 'TERM', 'COMMIT', 'APPLIED', 'LOOP P99 / MAX', 'READY'], rows),
    `${counts}; ${transfers.count} transfer${transfers.count === 1 ? '' : 's'} in flight`,
    ...transfers.shown.map((t) => `  ${transferLine(t)}`),
    ...(transfers.count > transfers.shown.length ? [`  ... and ${transfers.count - transfers.shown.length} more`] : []),
    ...p.members.flatMap(catchingUpLines),
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

function addresses(given: string | undefined, from: string): string[] {
  if (given === undefined) return DEFAULT_URLS;
  const urls = given.split(',').map((u) => u.trim()).filter((u) => u !== '');
  if (urls.length === 0) throw new UsageError(`${from} names no address: give it as http://host:port`);
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`${from} ${JSON.stringify(url)} is not a URL: give it as http://host:port`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new UsageError(`${from} ${url} is not an http(s) address: give it as http://host:port`);
    }
  }
  return urls.map((u) => u.replace(/\/+$/, ''));
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
