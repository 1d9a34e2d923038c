import type { Command } from 'commander';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { pageLines, withPageOptions, type PagedListing } from '../paged-listing.js';
import { MAX_PAGE_LIMIT, type StreamSummary } from '@baton/stream-transfer';
import { cliCall } from '../api-client.js';
import { STREAM_API, streamNode } from './stream-api.js';

const streamListing: PagedListing<StreamSummary> = {
  command: 'baton streams list',
  plural: 'streams',
  nothing: 'no streams exist',
  counted: (total) => `${total} stream(s)`,
  columns: ['STREAM', 'OWNER', 'EPOCH', 'STATE', 'TAIL', 'TRANSFER'],
  row: (s) => [
    s.stream,
    s.owner,
    String(s.epoch),
    s.state,
    String(s.tail),
    s.transfer ? `${s.transfer.source} -> ${s.transfer.target} (${s.transfer.reason})` : '-',
  ],
};

/** `baton streams list`: one page of streams by id, and how to ask for the next. */
export function registerListCommand(streams: Command, ctx: CliContext): void {
  const command = withConnectionOptions(streams.command('list'), STREAM_API).description(
    'list streams by id, a page at a time: owner, epoch, state, tail, transfer',
  );
  withPageOptions(command, { placeholder: 'stream', after: 'stream id', perPage: 'streams', maxPage: MAX_PAGE_LIMIT })
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
      const client = streamNode(connectionOf(ctx, command, STREAM_API));
      const query = { ...(options.after ? { after: options.after } : {}), ...(options.limit ? { limit: options.limit } : {}) };
      const page = await cliCall(client.GET('/v1/admin/streams', { params: { query } }));
      output.result(page, (p, view) => pageLines(streamListing, { items: p.streams, next: p.next, total: p.total }, options, view));
    });
}
