import type { Command } from 'commander';
import { cliCall, streamApi } from '../api-client.js';
import { MILLISECONDS_HELP, SECONDS_HELP, durationMs, idempotencyKeyArgument, integerAtLeast } from '../arguments.js';
import { TimedOutError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { agreedToMove } from '../confirm.js';
import { outputFor, type CliContext } from '../context.js';
import { progressView } from '../progress.js';
import { pollUntil } from '../wait.js';
import { SystemClock } from '@baton/kernel';
import type { DrainProgress } from '@baton/stream-transfer';
import { keyHeader } from '../idempotency-header.js';
import { STREAM_API, streamNode } from './stream-api.js';
import { DEFAULT_INTERVAL_MS, seconds } from './transfer-commands.js';

const DEFAULT_DRAIN_TIMEOUT_MS = 600_000;

/** `baton streams drain NODE` and `baton streams undrain NODE`. */
export function registerDrainCommands(streams: Command, ctx: CliContext): void {
  withConnectionOptions(streams.command('drain'), STREAM_API)
    .description(
      'move every stream off a node (for maintenance), showing progress until it owns nothing',
    )
    .argument('<node>', 'the node to empty')
    .option(
      '--max-in-flight <n>',
      'transfers the drain runs at once (default: the node setting)',
      integerAtLeast(1),
    )
    .option('--if-streams <n>', 'drain it only while it still owns this many streams (refused otherwise, exit 1, nothing changed)', integerAtLeast(0))
    .option('--key <idempotency-key>', 'retrying with the same key answers the first decision', idempotencyKeyArgument)
    .option('--no-wait', 'return once the drain is accepted; the cluster carries it on')
    .option('-y, --yes', 'drain without asking first (needed when stdin is not a terminal)')
    .option(
      '--timeout <duration>',
      `how long to wait for the node to own nothing (default 600 s; ${SECONDS_HELP})`,
      durationMs('s'),
    )
    .option('--interval <duration>', `how often to check progress (default 250 ms; ${MILLISECONDS_HELP})`, durationMs('ms', 10))
    .addHelpText(
      'after',
      `
The node takes no new streams and hands its streams to the least loaded nodes, a few at a time.
Progress is a bar on a terminal, one line per change otherwise, and with --json one
{"progress": ...} line per change on stderr and the final state on stdout. When the wait ends
the drain goes on in the cluster; running the command again resumes watching it.
On a terminal the command asks first; without one (a script, a pipe) it needs --yes (exit 2
otherwise, nothing moved).
"baton streams undrain NODE" stops it (transfers already started finish).

Examples:
  baton streams drain n1
  baton streams drain n1 --max-in-flight 8 --timeout 30m
  baton streams drain n1 --yes --no-wait --json`,
    )
    .action(
      async (
        node: string,
        options: { maxInFlight?: number; wait: boolean; timeout?: number; interval?: number; yes?: boolean; ifStreams?: number; key?: string },
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        const client = streamNode(connectionOf(ctx, command, STREAM_API));
        const path = { node };
        if (!(await agreedToMove(ctx, options, `streams drain ${node}`, `move every stream off ${node}?`))) {
          output.result({ id: node, declined: true }, () => 'nothing moved');
          return;
        }
        const body = {
          ...(options.maxInFlight ? { maxInFlight: options.maxInFlight } : {}),
          ...(options.ifStreams === undefined ? {} : { expected_streams: options.ifStreams }),
        };
        const first = await cliCall(
          client.POST('/v1/admin/nodes/{node}/drain', {
            params: { path },
            ...(Object.keys(body).length > 0 ? { body } : {}),
            headers: keyHeader(options.key),
          }),
        );
        let last = first;
        if (options.wait && !first.drained) {
          // The streams the node held when asked: the bar counts them down.
          const total = first.remaining;
          const view = progressView(ctx, output, `draining ${node}`);
          const clock = new SystemClock();
          try {
            const waited = await pollUntil(
              () => cliCall(client.GET('/v1/admin/nodes/{node}', { params: { path } })),
              (progress) => progress.drained,
              (progress) =>
                view.update(drainReading(progress, Math.max(total, progress.remaining))),
              {
                clock,
                intervalMs: options.interval ?? DEFAULT_INTERVAL_MS,
                timeoutMs: options.timeout ?? DEFAULT_DRAIN_TIMEOUT_MS,
              },
            );
            last = waited.reading;
            if (!waited.done) {
              throw new TimedOutError(
                'drain_unfinished',
                `${node} still owns ${last.remaining} stream(s) after ${seconds(options.timeout ?? DEFAULT_DRAIN_TIMEOUT_MS)}` +
                  `${stuck(last) ? ': no other node can take them (add a node or free slots, or undrain it)' : ''}; ` +
                  `the drain goes on in the cluster: run "baton streams drain ${node}" again to follow it`,
              );
            }
          } finally {
            view.stop();
          }
        }
        output.result(last, (p) =>
          p.drained
            ? `${p.id} is drained: it owns no streams and can be taken down`
            : `${p.id} is draining: ${p.remaining} stream(s) to move, ${p.outgoing} moving now` +
              `${stuck(p) ? ' (waiting for a node with free slots)' : ''}; follow it with "baton streams drain ${p.id}"`,
        );
      },
    );

  withConnectionOptions(streams.command('undrain'), STREAM_API)
    .description('stop draining a node: it takes streams again (transfers already started finish)')
    .argument('<node>', 'the node to put back in service')
    .addHelpText(
      'after',
      `
Examples:
  baton streams undrain n1`,
    )
    .action(async (node: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, STREAM_API);
      const body = await cliCall(
        streamApi(connection).POST('/v1/admin/nodes/{node}/undrain', { params: { path: { node } } }),
      );
      output.result(
        body,
        (p) =>
          `${p.id} is in service: it owns ${p.owned} stream(s)${p.outgoing > 0 ? `, ${p.outgoing} still moving out` : ''}`,
      );
    });
}

/** A drain waiting with nothing moving: every other node is full or draining too. */
function stuck(progress: DrainProgress): boolean {
  return progress.remaining > 0 && progress.outgoing === 0;
}

function drainReading(progress: DrainProgress, total: number) {
  const moved = total - progress.remaining;
  const rest =
    `${progress.remaining} to go, ${progress.outgoing} moving` +
    (stuck(progress) ? ' (waiting for a node with free slots)' : '');
  return {
    done: moved,
    total,
    line: `${moved} of ${total} stream(s) moved, ${rest}`,
    detail: `stream(s) moved, ${rest}`,
    data: progress,
  };
}
