import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { authorityControlApi, cliAnswer } from '../api-client.js';
import { SECONDS_HELP, durationMs, integerAtLeast, isoTime } from '../arguments.js';
import {
  FailedError,
  HttpRefusal,
  NoAnswerInTimeError,
  UnreachableError,
  UsageError,
} from '../cli-errors.js';
import { isTimeout } from '../connection-failure.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { keyHeader } from '../idempotency-header.js';
import { AUTHORITY_CONTROL, auditLines, type AuditRecord } from './control-api.js';
import { rosterDatacenters } from './roster-lookup.js';
import { noteOnceWaiting } from './waiting-note.js';

/**
 * Longer than the node's catch-up budget (five minutes by default), so the node's own 504 is
 * what ends a wait for a target that does not catch up, not the CLI giving up first.
 */
const DEFAULT_TRANSFER_TIMEOUT_MS = 330_000;
const OPERATION_KEY = /^[A-Za-z0-9._:~-]{1,128}$/;

interface TransferOptions {
  from: string;
  to: string;
  reason: string;
  key?: string;
  ifEpoch?: number;
  timeout?: number;
  allowUnknownTarget?: boolean;
  notBefore?: string;
  notAfter?: string;
}

/** What a scheduled transfer's POST answers (202): its status, with its schedule. */
interface ScheduledTransfer {
  id: string;
  authority: string;
  source: string;
  target: string;
  /** Optional in the API document, which types one answer for every transfer in flight; a 202 always names it. */
  not_before?: string;
  not_after?: string;
}

/** `baton authority transfer` and `baton authority cancel`. */
export function registerAuthorityTransferCommands(authority: Command, ctx: CliContext): void {
  withConnectionOptions(authority.command('transfer'), AUTHORITY_CONTROL)
    .description(
      "move an authority's home to another datacenter once it has caught up, and print the sealed audit",
    )
    .argument(
      '<authority>',
      'the authority to move (as its ecosystem names it, e.g. an npm package)',
    )
    .requiredOption('--from <datacenter>', 'the datacenter the authority lives in now')
    .requiredOption('--to <datacenter>', 'the datacenter to move it to')
    .requiredOption('--reason <text>', 'why it moves: recorded in the audit')
    .option(
      '--key <idempotency-key>',
      'the transfer identity; reuse it to retry (default: a new one, printed with the outcome)',
    )
    .option('--if-epoch <epoch>', 'move it only while it is still at this epoch, as "baton authority status" shows it (refused otherwise, exit 1)', integerAtLeast(0))
    .option('--allow-unknown-target', 'send a target that is no datacenter of the roster (it waits until its budget or a cancel)')
    .option('--not-before <time>', 'schedule it: registered now, started at this time, ISO 8601 (2026-12-03T22:00:00Z); answers at once', isoTime)
    .option('--not-after <time>', 'abandon it, with no audit, if it has not committed by this time, ISO 8601', isoTime)
    .option('--timeout <duration>', `how long to wait for the answer (default 330 s; ${SECONDS_HELP})`, durationMs('s'))
    .addHelpText(
      'after',
      `
The node commits only once the target datacenter has applied every write it acknowledged; the
command waits for that (up to the node's budget, five minutes by default). Then it prints the
sealed audit: id, actor (your token's principal), reason, barrier, epoch, commit term and index.

A target that is no datacenter of the roster (a typo) is refused before anything is sent (exit
2), naming the roster's datacenters: the node would accept it and hold the authority until its
budget ran out or a cancel. --allow-unknown-target sends it anyway.

Refusals exit 1: a target that did not catch up in time (504: nothing moved, retry with the
same --key once it has), a transfer already running or cancelled (409, with the reason). A retry
with the same --key never moves twice: it answers with the first outcome. With --if-epoch
the transfer is refused (412, exit 1, nothing moved) unless the authority is still at that
epoch when it is registered: of two operators who saw one epoch, only the first moves it.

Examples:
  baton authority transfer proj --from east --to west --reason "drain east"
  baton authority transfer proj --from east --to west --reason "drain east" --key 5f0c-drain-proj
  baton authority transfer proj --from east --to west --reason "window" --not-before 2026-12-04T02:00:00Z --not-after 2026-12-04T04:00:00Z

With --not-before ahead the command answers once the transfer is registered ("scheduled", exit
0): any member shows it ("baton authority transfers") and "baton authority cancel" calls it off
until it commits; past --not-after it is abandoned with no audit, as a budget timeout.`,
    )
    .action(async (name: string, options: TransferOptions, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
      if (options.key !== undefined && !OPERATION_KEY.test(options.key)) {
        throw new UsageError(
          `--key ${JSON.stringify(options.key)} is not a valid idempotency key: use 1 to 128 letters, digits or . _ : ~ -`,
        );
      }
      // The node accepts any target and waits for it to catch up: a typo would hold the authority for minutes.
      // A roster that cannot be read (no answer, no scope, mode dc) leaves it to the transfer's own answer.
      if (options.allowUnknownTarget !== true) {
        const datacenters = await rosterDatacenters(connection).catch(() => undefined);
        if (datacenters && datacenters.length > 0 && !datacenters.includes(options.to)) {
          throw new UsageError(
            `--to ${options.to} is no datacenter of the roster (${datacenters.join(', ')}): a transfer there would wait until its budget ` +
              'or a cancel. Check the name, or give --allow-unknown-target to send it anyway',
          );
        }
      }
      // Chosen here, not by the node, so a retry can name it even if no answer ever arrives.
      const key = options.key ?? `cli-${randomUUID()}`;
      const retry = retryCommand(name, options, key);
      // Said only once the node is seen waiting on this very transfer: a refusal answers at once
      // and says why itself, so it never reads as a wait.
      const answered = new AbortController();
      void noteOnceWaiting(connection, name, key, answered.signal, (status) =>
        output.note(
          `transfer ${key}: waiting for ${options.to} to catch up to barrier ${status.barrier} ` +
            `(at ${status.frontier ?? 'no reading yet'}) and the move to commit ` +
            `(stopping this command does not stop the transfer: "baton authority cancel ${name}" does)`,
        ),
      );
      let record: AuditRecord | ScheduledTransfer;
      let status: number;
      try {
        const client = authorityControlApi(connection, { timeoutMs: options.timeout ?? DEFAULT_TRANSFER_TIMEOUT_MS });
        const body = {
          authority: name,
          source: options.from,
          target: options.to,
          reason: options.reason,
          ...(options.ifEpoch === undefined ? {} : { expected_epoch: options.ifEpoch }),
          ...(options.notBefore === undefined ? {} : { not_before: options.notBefore }),
          ...(options.notAfter === undefined ? {} : { not_after: options.notAfter }),
        };
        ({ data: record, status } = await cliAnswer(client.POST('/availability/v1/transfers', { body, headers: keyHeader(key) })));
      } catch (error) {
        throw transferFailure(error, name, options, retry);
      } finally {
        answered.abort();
      }
      if (status === 202) {
        const scheduled = record as ScheduledTransfer;
        output.result(scheduled, (r) =>
          `scheduled: transfer ${r.id} of ${r.authority} from ${r.source} to ${r.target} is registered and starts at ${r.not_before}` +
          `${r.not_after ? `; abandoned if not committed by ${r.not_after}` : ''} ("baton authority cancel ${r.authority}" calls it off)`,
        );
        return;
      }
      output.result(record as AuditRecord, (r) => [
        `committed: ${r.authority} moved from ${r.source} to ${r.target} at epoch ${r.epoch}`,
        ...auditLines(r),
      ]);
    });

  withConnectionOptions(authority.command('cancel'), AUTHORITY_CONTROL)
    .description('call off a transfer that has not committed yet')
    .argument('<authority>', 'the authority whose transfer to cancel')
    .addHelpText(
      'after',
      `
Outcomes: "cancelled" (exit 0: it had not committed, nothing moved, no audit); "already
committed: the move stands" (exit 1); "too late to cancel" while it is being committed (exit 1,
its outcome follows shortly); "no transfer" of that authority (exit 1).

Examples:
  baton authority cancel proj`,
    )
    .action(async (name: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
      try {
        await cliAnswer(authorityControlApi(connection).DELETE('/availability/v1/transfers/{authority}', { params: { path: { authority: name } } }));
      } catch (error) {
        throw cancelFailure(error);
      }
      output.result(
        { authority: name, cancelled: true },
        (r) =>
          `cancelled: the transfer of ${r.authority} was called off before it committed; nothing moved`,
      );
    });
}

/** A cancel's refusals in the words the seed gives them; anything else in the server's words. */
function cancelFailure(error: unknown): unknown {
  if (!(error instanceof HttpRefusal)) return error;
  if (error.status === 409 && error.problem.code === 'transfer_committing') {
    return new FailedError('transfer_committing', `too late to cancel: ${detail(error)}`, {
      cause: error,
    });
  }
  if (error.status === 409) {
    return new FailedError(
      'already_committed',
      `already committed: the move stands (${detail(error)})`,
      {
        cause: error,
      },
    );
  }
  // A 404 from the engine names the authority; a 404 of the route means the wrong listener.
  if (error.status === 404 && error.problem.code === 'transfer_not_found') {
    return new FailedError('no_transfer', `no transfer: ${detail(error)}`, { cause: error });
  }
  return error;
}

/** The same command with the key it used, so a retry reaches the first outcome, never a second move. */
function retryCommand(name: string, options: TransferOptions, key: string): string {
  const quote = (text: string) =>
    /^[\w.:@/-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
  const guard = options.ifEpoch === undefined ? '' : ` --if-epoch ${options.ifEpoch}`;
  return `baton authority transfer ${quote(name)} --from ${quote(options.from)} --to ${quote(options.to)} --reason ${quote(options.reason)} --key ${quote(key)}${guard}`;
}

/** The refusals a planned transfer can meet, each with what to do next. */
function transferFailure(
  error: unknown,
  name: string,
  options: TransferOptions,
  retry: string,
): unknown {
  if (error instanceof UnreachableError && isTimeout(error.cause)) {
    // The node has the request and is still waiting for the target: the transfer goes on.
    return new NoAnswerInTimeError(
      error.address,
      options.timeout ?? DEFAULT_TRANSFER_TIMEOUT_MS,
      `; the transfer goes on at the node. Follow it with "baton authority status ${name}", call ` +
        `it off with "baton authority cancel ${name}", or wait for its answer by reissuing it ` +
        `with the same key (it never moves twice): ${retry}`,
      { cause: error },
    );
  }
  if (error instanceof UnreachableError) {
    return new UnreachableError(
      error.address,
      `${error.reason}. If the request was sent the ` +
        `transfer may still be running: check with "baton authority status ${name}", or reissue it with the ` +
        `same key (it never moves twice): ${retry}`,
      { cause: error },
    );
  }
  if (!(error instanceof HttpRefusal)) return error;
  if (error.status === 504) {
    const barrier =
      typeof error.problem.barrier === 'number' ? ` (barrier ${error.problem.barrier})` : '';
    return new FailedError(
      'target_not_caught_up',
      `the target ${options.to} had not caught up${barrier} within the node's budget: nothing moved and no ` +
        `audit was written. Let it catch up, then retry with the same key: ${retry}`,
      { cause: error },
    );
  }
  if (error.status === 409) {
    return new FailedError(error.code, `refused: ${detail(error)}${conflictAdvice(error, name)}`, {
      cause: error,
    });
  }
  if (error.status === 503 && typeof error.problem.transfer_id === 'string') {
    return new FailedError(
      error.code,
      `${detail(error)}; retry with the same key to finish it: ${retry}`,
      { cause: error },
    );
  }
  return error;
}

function conflictAdvice(error: HttpRefusal, name: string): string {
  switch (error.problem.code) {
    case 'transfer_in_progress':
      return `. See it with "baton authority status ${name}", or call it off with "baton authority cancel ${name}"`;
    case 'transfer_cancelled':
      return '. Start it again with a new key if it is still wanted';
    default:
      return '';
  }
}

function detail(error: HttpRefusal): string {
  return typeof error.problem.detail === 'string' ? error.problem.detail : error.message;
}
