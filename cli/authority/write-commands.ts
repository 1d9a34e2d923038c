import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { authorityControlApi, authorityPublicApi, cliCall } from '../api-client.js';
import { FailedError, HttpRefusal, UsageError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions, type Connection } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { keyHeader } from '../idempotency-header.js';
import { AUTHORITY_CONTROL, homeAt } from './control-api.js';
import { homeMember, rosterDatacenters } from './roster-lookup.js';

/** A write's operation: what the change feed records (bounded, so one write is one small entry). */
const MAX_OPERATION_CHARS = 4096;
/** How many operations one command writes, in order. */
const MAX_OPERATIONS = 1000;
const OPERATION_KEY = /^[A-Za-z0-9._:~-]{1,128}$/;

interface CreateOptions {
  home: string;
  key?: string;
}

interface WriteOptions {
  publicUrl?: string;
}

interface Placed {
  authority: string;
  home: string;
  epoch: number;
  commit_index: number;
  replayed: boolean;
}

interface Written {
  authority: string;
  epoch: number;
  serial: number;
}

/** `baton authority create` and `baton authority write`. */
export function registerAuthorityWriteCommands(authority: Command, ctx: CliContext): void {
  withConnectionOptions(authority.command('create'), AUTHORITY_CONTROL)
    .description('give a new authority its first home datacenter (epoch 1)')
    .argument('<authority>', 'the authority to create (as its ecosystem names it)')
    .requiredOption('--home <datacenter>', 'the datacenter of the roster it lives in')
    .option(
      '--key <idempotency-key>',
      'the creation identity; reuse it to retry (default: a new one)',
    )
    .addHelpText(
      'after',
      `
The authority is placed through the ownership consensus: every member then agrees on its home
and epoch, writes to it are accepted at that home, and "baton authority transfer" can move it.
An authority that already has a home is refused (exit 1): move it with a transfer instead.

Examples:
  baton authority create docs --home west
  baton authority write docs "publish 1.0.0"`,
    )
    .action(async (name: string, options: CreateOptions, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
      if (options.key !== undefined && !OPERATION_KEY.test(options.key)) {
        throw new UsageError(
          `--key ${JSON.stringify(options.key)} is not a valid idempotency key: use 1 to 128 letters, digits or . _ : ~ -`,
        );
      }
      // A home outside the roster would hold an authority no member can serve writes for.
      const datacenters = await rosterDatacenters(connection);
      if (!datacenters.includes(options.home)) {
        throw new UsageError(
          `--home ${options.home} is no datacenter of the roster: choose ${datacenters.join(', ')}`,
        );
      }
      let placed: Placed;
      try {
        placed = await cliCall(
          authorityControlApi(connection).POST('/availability/v1/commands', {
            headers: keyHeader(options.key ?? `cli-create-${randomUUID()}`),
            body: { type: 'transfer_authority', authority: name, target: options.home },
          }),
        );
      } catch (error) {
        throw await createFailure(error, connection, name);
      }
      output.result(
        { authority: placed.authority, home: placed.home, epoch: placed.epoch },
        (r) => `created ${r.authority} in ${r.home} (epoch ${r.epoch})`,
      );
    });

  withConnectionOptions(authority.command('write'), AUTHORITY_CONTROL)
    .description("write operations to an authority at its home, under its current epoch")
    .argument('<authority>', 'the authority to write to')
    .argument('<operations...>', 'what each write records (one write per argument, in order)')
    .option(
      '--public-url <url>',
      "a home member's public server (default: found through the control listener)",
    )
    .addHelpText(
      'after',
      `
A write is accepted only at the authority's home datacenter and under its current epoch: the
command reads both from the control listener, finds a member of the home datacenter, and sends
each write to that member's public server. Each acknowledged write raises the serial a planned
transfer's barrier counts, so a transfer that follows waits for the target to apply them.

A write refused because the authority moved (stale epoch) or is frozen by a transfer about to
commit exits 1 and says so; nothing after it is written.

Examples:
  baton authority write proj "publish 1.0.0" "publish 1.0.1"
  baton authority status proj`,
    )
    .action(
      async (name: string, operations: string[], options: WriteOptions, command: Command) => {
        const output = outputFor(ctx, command);
        const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
        if (operations.length > MAX_OPERATIONS) {
          throw new UsageError(
            `${operations.length} operations given: write at most ${MAX_OPERATIONS} at once`,
          );
        }
        const tooLong = operations.find((op) => op.length > MAX_OPERATION_CHARS);
        if (tooLong !== undefined) {
          throw new UsageError(
            `an operation of ${tooLong.length} characters is too long: keep each under ${MAX_OPERATION_CHARS}`,
          );
        }
        if (operations.some((op) => op === '')) {
          throw new UsageError('an operation is empty: say what the write records');
        }
        const home = await currentHome(connection, name);
        const member =
          options.publicUrl !== undefined
            ? { id: options.publicUrl, address: options.publicUrl }
            : await homeMember(connection, home.home);
        const written: Written[] = [];
        for (const operation of operations) {
          try {
            // The member's public server, with the token and CA of the control listener's connection.
            const body = await cliCall(
              authorityPublicApi({ ...connection, url: member.address }).POST('/availability/v1/authorities/{authority}/writes', {
                params: { path: { authority: name } },
                body: { operation, epoch: home.epoch },
              }),
            );
            written.push(body);
          } catch (error) {
            throw writeFailure(error, name, written.length);
          }
        }
        const first = written[0];
        const last = written[written.length - 1];
        output.result(
          {
            authority: name,
            home: home.home,
            member: member.id,
            epoch: home.epoch,
            serials: written.map((w) => w.serial),
          },
          (r) =>
            `wrote ${written.length} operation${written.length === 1 ? '' : 's'} to ${r.authority} at ` +
            `${r.member} (${r.home}, epoch ${r.epoch}): ` +
            (first === last ? `serial ${first.serial}` : `serials ${first.serial}-${last.serial}`),
        );
      },
    );
}

/** The authority's home and epoch as the control listener's member applied them. */
async function currentHome(
  connection: Connection,
  name: string,
): Promise<{ home: string; epoch: number }> {
  try {
    return await homeAt(connection, name);
  } catch (error) {
    if (error instanceof HttpRefusal && error.status === 404) {
      throw new FailedError(
        'unknown_authority',
        `${name} has no home yet: create it with "baton authority create ${name} --home DATACENTER"`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** A creation refused because the authority exists says where it lives; the rest as the node says. */
async function createFailure(error: unknown, connection: Connection, name: string): Promise<unknown> {
  if (!(error instanceof HttpRefusal) || (error.status !== 400 && error.status !== 409)) {
    return error;
  }
  const existing = await homeAt(connection, name).catch(() => undefined);
  if (!existing) return error;
  return new FailedError(
    'authority_exists',
    `${name} already exists: its home is ${existing.home} (epoch ${existing.epoch}); move it with ` +
      `"baton authority transfer ${name} --from ${existing.home} --to DATACENTER --reason ..."`,
    { cause: error },
  );
}

/** A refused write in the words of what happened to the authority, and what was written before it. */
function writeFailure(error: unknown, name: string, before: number): unknown {
  if (!(error instanceof HttpRefusal)) return error;
  const already = before > 0 ? ` (${before} earlier write(s) of this command were accepted)` : '';
  const detail = typeof error.problem.detail === 'string' ? error.problem.detail : error.message;
  switch (error.problem.code) {
    case 'stale_epoch':
    case 'not_home':
      return new FailedError(
        error.problem.code,
        `${detail}${already}. See where it lives with "baton authority status ${name}" and write again`,
        { cause: error },
      );
    case 'authority_frozen':
      return new FailedError(
        'authority_frozen',
        `${name} is frozen by a transfer about to commit: the write was not accepted${already}. ` +
          `Write again once "baton authority status ${name}" shows no transfer in flight`,
        { cause: error },
      );
    default:
      return error;
  }
}
