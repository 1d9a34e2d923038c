import type { Command } from 'commander';
import { MILLISECONDS_HELP, SECONDS_HELP, durationMs, integerAtLeast } from '../arguments.js';
import { TimedOutError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { progressView } from '../progress.js';
import { pollUntil } from '../wait.js';
import { SystemClock } from '@baton/kernel';
import type { RebalancePage } from '@baton/stream-transfer';
import { cliCall, type StreamApi } from '../api-client.js';
import { agreedToMove } from '../confirm.js';
import { rebalancePlanLines } from './rebalance-plan.js';
import { allNodes, allTransfers } from './all-pages.js';
import { STREAM_API, streamNode } from './stream-api.js';
import { DEFAULT_INTERVAL_MS, seconds } from './transfer-commands.js';

const DEFAULT_REBALANCE_TIMEOUT_MS = 600_000;

interface RebalanceReading {
  run: RebalancePage;
  /** Rebalance transfers started and not settled yet. */
  moving: number;
}

/** `baton streams rebalance [--dry-run]`. */
export function registerRebalanceCommand(streams: Command, ctx: CliContext): void {
  withConnectionOptions(streams.command('rebalance'), STREAM_API)
    .description('even out the streams across the nodes: show the plan, then run it with progress')
    .option('--dry-run', 'show the moves the cluster would make, and change nothing')
    .option('-y, --yes', 'run the plan without asking first')
    .option(
      '--max-in-flight <n>',
      'moves running at once (default: the cluster setting)',
      integerAtLeast(1),
    )
    .option('--no-wait', 'return once the plan is accepted; the cluster carries it out')
    .option(
      '--timeout <duration>',
      `how long to wait for every move to settle (default 600 s; ${SECONDS_HELP})`,
      durationMs('s'),
    )
    .option('--interval <duration>', `how often to check progress (default 250 ms; ${MILLISECONDS_HELP})`, durationMs('ms', 10))
    .addHelpText(
      'after',
      `
The plan moves streams from the most to the least loaded nodes (draining nodes take none). It
is shown first, each move as stream: from -> to, then each node's streams now and after. A
move whose stream changed meanwhile is skipped. Progress is shown as for "baton streams drain".

On a terminal the command asks before moving anything (answer y); --yes skips the question.
When stdin is not a terminal (a script, a pipe, cron) there is no one to ask: without --yes the
command moves nothing and exits 2 (usage), naming --yes.

Examples:
  baton streams rebalance --dry-run
  baton streams rebalance --max-in-flight 4
  baton streams rebalance --yes --no-wait --json`,
    )
    .action(
      async (
        options: {
          dryRun?: boolean;
          yes?: boolean;
          maxInFlight?: number;
          wait: boolean;
          timeout?: number;
          interval?: number;
        },
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        const connection = connectionOf(ctx, command, STREAM_API);
        const client = streamNode(connection);
        const rebalance = (body: { dryRun?: boolean; maxInFlight?: number }) => cliCall(client.POST('/v1/admin/rebalance', { body }));
        const owned = async () => new Map((await allNodes(client)).nodes.map((n) => [n.id, n.owned] as const));
        if (!options.dryRun && !options.yes) {
          if (ctx.stdin.isTTY !== true) await agreedToMove(ctx, options, 'streams rebalance', '');
          // The person sees the plan the cluster would run, then says whether to run it.
          const [preview, counts] = await Promise.all([
            rebalance({ dryRun: true }),
            owned(),
          ]);
          if (preview.planned === 0) {
            output.result({ dryRun: false, planned: 0, moves: [], settled: true }, () =>
              'the streams are balanced: nothing to move',
            );
            return;
          }
          ctx.stderr.write(`${rebalancePlanLines(preview, counts, 'would move').join('\n')}\n`);
          if (!(await agreedToMove(ctx, options, 'streams rebalance', `move these ${preview.planned} stream(s)?`))) {
            output.result({ dryRun: false, moves: [], settled: false, declined: true }, () =>
              'nothing moved',
            );
            return;
          }
        }
        const counts = await owned();
        const answer = await rebalance({
          ...(options.dryRun ? { dryRun: true } : {}),
          ...(options.maxInFlight ? { maxInFlight: options.maxInFlight } : {}),
        });
        const { moves, planned, truncated } = answer;
        const plan = (verb: string) => rebalancePlanLines(answer, counts, verb);
        if (options.dryRun) {
          output.result({ dryRun: true, planned, moves, truncated }, () => plan('would move'));
          return;
        }
        if (planned === 0 || !options.wait) {
          output.result({ dryRun: false, planned, moves, truncated, settled: planned === 0 }, (r) =>
            r.planned === 0
              ? 'the streams are balanced: nothing to move'
              : [...plan('moving'), `follow it with "baton streams transfers"`],
          );
          return;
        }
        if (!output.json) output.note(plan('moving').join('\n'));
        const view = progressView(ctx, output, 'rebalancing');
        let last: RebalanceReading;
        try {
          const waited = await pollUntil(
            () => readRebalance(client),
            (r) => r.run.waiting === 0 && r.moving === 0,
            (r) => view.update(rebalanceReading(r)),
            {
              clock: new SystemClock(),
              intervalMs: options.interval ?? DEFAULT_INTERVAL_MS,
              timeoutMs: options.timeout ?? DEFAULT_REBALANCE_TIMEOUT_MS,
            },
          );
          last = waited.reading;
          if (!waited.done) {
            throw new TimedOutError(
              'rebalance_unfinished',
              `the rebalance has not finished after ${seconds(options.timeout ?? DEFAULT_REBALANCE_TIMEOUT_MS)}: ` +
                `${last.run.waiting} move(s) not started, ${last.moving} moving; it goes on in the cluster ` +
                '(follow it with "baton streams transfers")',
            );
          }
        } finally {
          view.stop();
        }
        const { run } = last;
        output.result(
          { dryRun: false, planned, moves, truncated, settled: true, run },
          (r) =>
            `rebalanced: ${r.run.started} stream(s) moved` +
            `${r.run.skipped > 0 ? `, ${r.run.skipped} move(s) skipped because their stream had changed` : ''}`,
        );
      },
    );
}

async function readRebalance(client: StreamApi): Promise<RebalanceReading> {
  // One move of the queue is enough: the tallies say how many wait.
  const run = await cliCall(client.GET('/v1/admin/rebalance', { params: { query: { limit: 1 } } }));
  const { transfers } = await allTransfers(client);
  return { run, moving: transfers.filter((t) => t.reason === 'rebalance').length };
}

function rebalanceReading(r: RebalanceReading) {
  const settled = r.run.started - r.moving + r.run.skipped;
  return {
    done: settled,
    total: r.run.planned,
    line: `${settled} of ${r.run.planned} move(s) done, ${r.moving} moving, ${r.run.waiting} waiting`,
    detail: `move(s) done, ${r.moving} moving, ${r.run.waiting} waiting`,
    data: { ...r.run, moving: r.moving },
  };
}
