import type { Command } from 'commander';
import { integerAtLeast } from '../arguments.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { table } from '../table.js';
import { MAX_PAGE_LIMIT } from '../../framework/stream-transfer/listing.js';
import { STREAM_API, streamCall, streamClient } from './stream-api.js';

/** `baton streams list`: one page of streams by id, and how to ask for the next. */
export function registerListCommand(streams: Command, ctx: CliContext): void {
  withConnectionOptions(streams.command('list'), STREAM_API)
    .description('list streams by id, a page at a time: owner, epoch, state, tail, transfer')
    .option('--after <stream>', 'start after this stream id (the "next" of the previous page)')
    .option('--limit <n>', `streams per page (at most ${MAX_PAGE_LIMIT})`, integerAtLeast(1), 100)
    .addHelpText(
      'after',
      `
The cluster answers one page per call, so listing stays cheap with millions of streams. The
last line names the --after of the next page when there is one.

Examples:
  baton streams list
  baton streams list --limit 1000 --after events-0999
  baton streams list --json | jq -r '.streams[] | select(.transfer) | .stream'`,
    )
    .action(async (options: { after?: string; limit: number }, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamClient(connectionOf(ctx, command, STREAM_API));
      const page = await streamCall(() => client.streams({ after: options.after, limit: options.limit }));
      output.result(page, (p) => {
        if (p.streams.length === 0) return options.after ? `no streams after ${options.after}` : 'no streams exist';
        const rows = table(
          ['STREAM', 'OWNER', 'EPOCH', 'STATE', 'TAIL', 'TRANSFER'],
          p.streams.map((s) => [
            s.stream,
            s.owner,
            String(s.epoch),
            s.state,
            String(s.tail),
            s.transfer ? `${s.transfer.source} -> ${s.transfer.target} (${s.transfer.reason})` : '-',
          ]),
        );
        const footer =
          p.next === null
            ? `${p.streams.length} shown of ${p.total} stream(s)`
            : `${p.streams.length} shown of ${p.total} stream(s); next page: baton streams list --after ${p.next}`;
        return [...rows, footer];
      });
    });
}
