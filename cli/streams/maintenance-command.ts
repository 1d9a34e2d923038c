import type { Command } from 'commander';
import { durationMs, isoTime, positiveNumber } from '../arguments.js';
import { UsageError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { cliCall } from '../api-client.js';
import { STREAM_API, streamNode } from './stream-api.js';

/** `baton node maintenance NODE --for 2h [--start TIME] [--moves-per-second N]`, or `--end`. */
export function registerMaintenanceCommand(node: Command, ctx: CliContext): void {
  withConnectionOptions(node.command('maintenance'), STREAM_API)
    .description('put a stream node in maintenance for a while: drained at the start, streams handed back after the end')
    .argument('<node>', 'the stream node')
    .option('--for <duration>', 'how long the window lasts: 2h, 90m, 1h30m, 45s', durationMs('s', 1_000))
    .option('--start <time>', 'when it begins, ISO 8601 (2026-12-03T22:00:00Z); now when left out', isoTime)
    .option('--moves-per-second <n>', 'the pace streams are handed back at after the window (default 10)', positiveNumber)
    .option('--end', 'end the node\'s window now instead')
    .addHelpText(
      'after',
      `
From the start the node gives its streams away and takes no new one; at the end (the window
ends by itself) it is undrained and streams come back to it at --moves-per-second until the
cluster is even again. The cluster budget (node.maintenance.maxNodesInMaintenance, one zone at a
time with oneValueOf) refuses a window that would overlap too many (exit 1, 409).

Examples:
  baton node maintenance n2 --for 2h
  baton node maintenance n3 --for 30m --start 2026-12-03T22:00:00Z --moves-per-second 5
  baton node maintenance n2 --end`,
    )
    .action(async (name: string, options: { for?: number; start?: string; movesPerSecond?: number; end?: boolean }, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamNode(connectionOf(ctx, command, STREAM_API));
      const path = { node: name };
      if (options.end) {
        if (options.for !== undefined || options.start !== undefined) throw new UsageError('--end ends the window now: it takes no --for or --start');
        const { node } = await cliCall(client.DELETE('/v1/admin/nodes/{node}/maintenance', { params: { path } }));
        output.result({ node }, (r) => `${r.node.id}: maintenance ended; streams come back to it${r.node.returning ? '' : ' (nothing to hand back)'}`);
        return;
      }
      if (options.for === undefined) throw new UsageError('say how long with --for (e.g. --for 2h), or end a window with --end');
      const window = {
        duration: options.for,
        ...(options.start !== undefined ? { start: options.start } : {}),
        ...(options.movesPerSecond !== undefined ? { movesPerSecond: options.movesPerSecond } : {}),
      };
      const { node } = await cliCall(client.POST('/v1/admin/nodes/{node}/maintenance', { params: { path }, body: window }));
      output.result({ node }, (r) =>
        r.node.maintenance ? `${r.node.id}: in maintenance from ${r.node.maintenance.start} to ${r.node.maintenance.end}` : `${r.node.id}: no window`,
      );
    });
}
