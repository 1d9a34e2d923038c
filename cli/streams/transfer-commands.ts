import type { Command } from 'commander';
import { MILLISECONDS_HELP, SECONDS_HELP, durationMs, idempotencyKeyArgument, integerAtLeast } from '../arguments.js';
import { FailedError, TimedOutError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { pollUntil } from '../wait.js';
import { SystemClock } from '@baton/kernel';
import { cliCall } from '../api-client.js';
import { keyHeader } from '../idempotency-header.js';
import { allTransfers } from './all-pages.js';
import { STREAM_API, streamNode } from './stream-api.js';

const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_INTERVAL_MS = 250;

interface TransferOutcome {
  stream: string;
  source?: string;
  target: string;
  status: 'settled' | 'pending';
  owner?: string;
  epoch?: number;
  waitedMs: number;
}

/** `baton streams transfer NAME --to NODE` and `baton streams transfers`. */
export function registerTransferCommands(streams: Command, ctx: CliContext): void {
  withConnectionOptions(streams.command('transfer'), STREAM_API)
    .description('move a stream to another node, and wait until the handoff has settled')
    .argument('<name>', 'the stream to move')
    .requiredOption('--to <node>', 'the node that will own it')
    .option('--if-epoch <epoch>', 'move it only while it is still at this epoch (refused otherwise, exit 1, nothing moved)', integerAtLeast(0))
    .option('--key <idempotency-key>', 'retrying with the same key answers the first decision, never a second move', idempotencyKeyArgument)
    .option('--no-wait', 'return once the transfer is accepted, without waiting for the handoff')
    .option('--timeout <duration>', `how long to wait for the handoff (default 60 s; ${SECONDS_HELP})`, durationMs('s'))
    .option('--interval <duration>', `how often to check the handoff (default 250 ms; ${MILLISECONDS_HELP})`, durationMs('ms', 10))
    .addHelpText(
      'after',
      `
The source closes the stream and the target reopens it at the next epoch; appends meanwhile
wait on the target rather than fail. Asking again for the same move is not an error; a stream
already moving elsewhere is refused (exit 1) with the reason. With --if-epoch the cluster
moves it only while it is still at that epoch ("baton streams status NAME" shows it): of two
operators who saw the same epoch, only the first moves it.

Examples:
  baton streams transfer events --to n2
  baton streams transfer events --to n2 --no-wait --json`,
    )
    .action(
      async (
        name: string,
        options: { to: string; wait: boolean; timeout?: number; interval?: number; ifEpoch?: number; key?: string },
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        const client = streamNode(connectionOf(ctx, command, STREAM_API));
        const clock = new SystemClock();
        const started = clock.now();
        const body = { stream: name, target: options.to, ...(options.ifEpoch === undefined ? {} : { expected_epoch: options.ifEpoch }) };
        // Pending (from its source), settled (on its owner), or already there: read as one shape.
        const accepted: { status: 'pending' | 'settled'; source?: string; owner?: string } = await cliCall(
          client.POST('/v1/admin/transfers', { body, headers: keyHeader(options.key) }),
        );
        let outcome: TransferOutcome = {
          stream: name,
          source: accepted.source,
          target: options.to,
          status: accepted.status,
          ...(accepted.owner ? { owner: accepted.owner } : {}),
          waitedMs: 0,
        };
        if (accepted.status === 'pending' && options.wait) {
          output.note(
            `waiting for the handoff of ${name} from ${accepted.source} to ${options.to}...`,
          );
          const waited = await pollUntil(
            () => cliCall(client.GET('/v1/admin/transfers/{stream}', { params: { path: { stream: name } } })),
            (status) => status.status === 'settled',
            () => undefined,
            {
              clock,
              intervalMs: options.interval ?? DEFAULT_INTERVAL_MS,
              timeoutMs: options.timeout ?? DEFAULT_TIMEOUT_MS,
            },
          );
          const reading = waited.reading as {
            status: 'pending' | 'settled';
            owner?: string;
            epoch?: number;
          };
          outcome = {
            ...outcome,
            status: reading.status,
            ...(reading.owner ? { owner: reading.owner } : {}),
            ...(reading.epoch !== undefined ? { epoch: reading.epoch } : {}),
            waitedMs: clock.now() - started,
          };
          if (!waited.done) {
            throw new TimedOutError(
              'handoff_pending',
              `the handoff of ${name} from ${accepted.source} to ${options.to} has not settled within ` +
                `${seconds(options.timeout ?? DEFAULT_TIMEOUT_MS)}; it continues on the cluster (the source closes the stream, ` +
                `then completes it): follow it with "baton streams status ${name}"`,
            );
          }
        }
        if (outcome.status === 'settled' && outcome.owner !== options.to) {
          throw new FailedError(
            'moved_elsewhere',
            `the handoff of ${name} settled, but its owner is ${outcome.owner}, not ${options.to}: ` +
              'another transfer (a drain or rebalance) moved it since',
          );
        }
        output.result(outcome, (o) =>
          o.status === 'pending'
            ? `transfer of ${o.stream} from ${o.source} to ${o.target} accepted; the handoff is in progress ` +
              `(follow it with "baton streams status ${o.stream}")`
            : o.source
              ? `moved ${o.stream} from ${o.source} to ${o.target}: open at epoch ${o.epoch} (handoff took ${seconds(o.waitedMs)})`
              : `${o.stream} is already on ${o.target}: nothing to move`,
        );
      },
    );

  withConnectionOptions(streams.command('transfers'), STREAM_API)
    .description('list the transfers in progress, oldest first')
    .addHelpText(
      'after',
      `
Examples:
  baton streams transfers
  baton streams transfers --json | jq '.transfers | length'`,
    )
    .action(async (_options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const { transfers } = await allTransfers(streamNode(connectionOf(ctx, command, STREAM_API)));
      output.result({ transfers }, (r) =>
        r.transfers.length === 0
          ? 'no transfers in progress'
          : r.transfers.map(
              (t) => `${t.stream}: ${t.source} -> ${t.target} (${t.reason}, from epoch ${t.epoch})`,
            ),
      );
    });
}

export function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
