import type { Command } from 'commander';
import { idempotencyKeyArgument, integerAtLeast } from '../arguments.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { agreedToMove } from '../confirm.js';
import { outputFor, type CliContext } from '../context.js';
import { cliCall } from '../api-client.js';
import { keyHeader } from '../idempotency-header.js';
import { STREAM_API, streamNode } from './stream-api.js';

/** `baton streams failover NODE [--force]`. */
export function registerFailoverCommand(streams: Command, ctx: CliContext): void {
  withConnectionOptions(streams.command('failover'), STREAM_API)
    .description("move every stream of a lost (Dead) node to live nodes, without the node's help")
    .argument('<node>', 'the Dead node whose streams should move')
    .option('--force', 'fail over a node that is not Dead, or on a store without conditional puts')
    .option('-y, --yes', 'fail over without asking first (needed when stdin is not a terminal)')
    .option('--if-streams <n>', 'fail it over only while it still owns this many streams (refused otherwise, exit 1, nothing moved)', integerAtLeast(0))
    .option('--key <idempotency-key>', 'retrying with the same key answers the first decision', idempotencyKeyArgument)
    .addHelpText(
      'after',
      `
Each stream of the node (and each transfer from it) is given to a live node with a free slot at
the next epoch. The new owner finds the stream's tail in the object store and writes a fence there
that the old node's next write cannot pass, so a node that was only paused or cut off can never
acknowledge another append to those streams; when it returns it drops them and rejoins empty.
Transfers to the node are cancelled. Streams that find no free slot stay (see "remaining"):
add capacity and run the command again.

A node that is not Dead is refused (409) unless --force: prefer "baton streams drain" for a
node that still answers. On a store without conditional puts (e.g. s3rver) the old node cannot
be fenced in the store and the failover is refused unless --force; only force it there once the
node is certainly stopped.

On a terminal the command asks first; without one (a script, a pipe) it needs --yes (exit 2
otherwise, nothing moved).

The metadata leader also fails a node over by itself once it has been Dead for
node.liveness.autoFailoverAfterMs (default 1 s; null turns that off).

Examples:
  baton streams failover n3
  baton streams failover n3 --yes --force --json`,
    )
    .action(async (node: string, options: { force?: boolean; yes?: boolean; ifStreams?: number; key?: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamNode(connectionOf(ctx, command, STREAM_API));
      if (!(await agreedToMove(ctx, options, `streams failover ${node}`, `give every stream of ${node} to live nodes?`))) {
        output.result({ node, declined: true }, () => 'nothing moved');
        return;
      }
      const body = {
        ...(options.force ? { force: true } : {}),
        ...(options.ifStreams === undefined ? {} : { expected_streams: options.ifStreams }),
      };
      const result = await cliCall(
        client.POST('/v1/admin/nodes/{node}/failover', {
          params: { path: { node } },
          ...(Object.keys(body).length > 0 ? { body } : {}),
          headers: keyHeader(options.key),
        }),
      );
      output.result(result, (r) =>
        r.duplicate
          ? `${node} owns no stream to fail over (${r.liveness})`
          : `failed over ${node} (${r.liveness}): ${r.moved} stream(s) moved` +
            (r.remaining > 0 ? `, ${r.remaining} left for lack of free slots: add capacity and run it again` : ''),
      );
    });
}
