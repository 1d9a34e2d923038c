import type { Command } from 'commander';
import { authorityControlApi, cliCall } from '../api-client.js';
import { MAX_AUDIT_PAGE } from '@baton/authority-transfer';
import { integerAtLeast } from '../arguments.js';
import { shellWord } from '../shell-word.js';
import { FailedError, HttpRefusal } from '../cli-errors.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { table } from '../table.js';
import { seconds } from '../streams/transfer-commands.js';
import {
  AUTHORITY_CONTROL,
  auditLines,
  type AuditRecord,
  type TransferStatus,
} from './control-api.js';

interface Home {
  authority: string;
  home: string;
  epoch: number;
}

interface Member {
  member: string;
  datacenter: string;
  state: string;
  last_heard_ms_ago: number | null;
}

/** `baton authority status | audit | members`: what an operator reads before and after a move. */
export function registerAuthorityReadCommands(authority: Command, ctx: CliContext): void {
  withConnectionOptions(authority.command('status'), AUTHORITY_CONTROL)
    .description("show an authority's home and epoch, and its transfer in flight if any")
    .argument('<authority>', 'the authority to look at')
    .addHelpText(
      'after',
      `
A transfer in flight shows its state (AwaitingCatchUp, Ready, Committing), the barrier, the
target's latest applied serial (frontier), its age and the time left before it times out.

Examples:
  baton authority status proj
  baton authority status proj --json`,
    )
    .action(async (name: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
      const client = authorityControlApi(connection);
      const path = { authority: name };
      const [home, transfer] = await Promise.all([
        unlessMissing<Home>(() => cliCall(client.GET('/availability/v1/authorities/{authority}', { params: { path } }))),
        unlessMissing<TransferStatus>(() => cliCall(client.GET('/availability/v1/transfers/{authority}', { params: { path } }))),
      ]);
      if (!home && !transfer) {
        throw new FailedError(
          'unknown_authority',
          `${name} has no home and no transfer in flight on ${connection.url}`,
        );
      }
      const result = {
        authority: name,
        home: home?.home ?? null,
        epoch: home?.epoch ?? null,
        transfer: transfer ?? null,
      };
      output.result(result, (r) => [
        r.home === null
          ? `${r.authority}: no home yet`
          : `${r.authority}: home ${r.home}, epoch ${r.epoch}`,
        ...(r.transfer ? transferLines(r.transfer) : ['  no transfer in flight']),
      ]);
    });

  withConnectionOptions(authority.command('audit'), AUTHORITY_CONTROL)
    .description(
      "list the sealed audit records of an authority's moves (planned transfers, establish, failovers), newest first",
    )
    .argument('<authority>', 'the authority whose moves to list')
    .option('--limit <n>', `most records to show (at most ${MAX_AUDIT_PAGE})`, integerAtLeast(1, MAX_AUDIT_PAGE), 20)
    .option('--before <commit-index>', 'only records older than this commit index (the "next" of the previous page)', integerAtLeast(0))
    .addHelpText(
      'after',
      `
Each record is the durable audit a move sealed: its kind (planned_transfer, authority_established,
failover_transfer, raw_transfer), id, source and target, actor, reason, barrier, epoch, and the
commit's term and index. Cancelled or timed-out transfers moved nothing and have none. "baton
audit verify --authority NAME" checks the trail's hash chain.

A history longer than one page is read a page at a time: the last line names the --before of
the next (older) page when there is one.

Examples:
  baton authority audit proj
  baton authority audit proj --limit 100 --json
  baton authority audit proj --before 9043`,
    )
    .action(async (name: string, options: { limit: number; before?: number }, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
      let records: AuditRecord[];
      let next: number | null;
      try {
        // A node answering no `next` predates paged audits: its page is the whole answer.
        const query = { limit: options.limit, ...(options.before === undefined ? {} : { before: options.before }) };
        const page: { records: AuditRecord[]; next?: number | null } = await cliCall(
          authorityControlApi(connection).GET('/availability/v1/authorities/{authority}/audit', { params: { path: { authority: name }, query } }),
        );
        ({ records, next = null } = page);
      } catch (error) {
        if (
          error instanceof HttpRefusal &&
          error.status === 404 &&
          error.problem.authority === undefined
        ) {
          throw new FailedError(
            'audit_not_served',
            `${connection.url} does not serve audit reads: this node predates them, or the address ` +
              'is not an authority control listener (give --url the control listener "baton up" printed)',
            { cause: error },
          );
        }
        throw error;
      }
      output.result({ authority: name, records, next }, (r) => {
        if (r.records.length === 0) {
          return options.before === undefined
            ? `${r.authority} has no audit records`
            : `${r.authority} has no audit records before commit index ${options.before}`;
        }
        const limit = options.limit === 20 ? '' : ` --limit ${options.limit}`;
        return [
          ...r.records.flatMap((record, i) => [
            ...(i > 0 ? [''] : []),
            // A record sealed before kinds existed is a planned transfer's; an establish has no source.
            `${record.kind ?? 'planned_transfer'}: ${record.source || '(no home)'} -> ${record.target} at epoch ${record.epoch}`,
            ...auditLines(record),
          ]),
          ...(r.next === null ? [] : ['', `older records: baton authority audit ${shellWord(r.authority)}${limit} --before ${r.next}`]),
        ];
      });
    });

  withConnectionOptions(authority.command('members'), AUTHORITY_CONTROL)
    .description(
      "list the roster members and what this node's tracker thinks of each (Alive, Suspect, Dead)",
    )
    .addHelpText(
      'after',
      `
A failover may only move an authority away from a datacenter the tracker calls Dead; a planned
transfer needs its target reachable to catch up.

Examples:
  baton authority members
  baton authority members --json | jq '.members[] | select(.state != "Alive")'`,
    )
    .action(async (_options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
      const result: { members: Member[] } = await cliCall(authorityControlApi(connection).GET('/availability/v1/members'));
      output.result(result, (r, view) =>
        table(
          ['MEMBER', 'DATACENTER', 'STATE', 'LAST HEARD'],
          r.members.map((m) => [
            m.member,
            m.datacenter,
            m.state,
            m.last_heard_ms_ago === null ? 'never' : `${seconds(m.last_heard_ms_ago)} ago`,
          ]),
          view,
        ),
      );
    });
}

/** The answer, or undefined when the node says there is none (a 404 naming the authority). */
async function unlessMissing<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (
      error instanceof HttpRefusal &&
      error.status === 404 &&
      error.problem.authority !== undefined
    ) {
      return undefined;
    }
    throw error;
  }
}

function transferLines(t: TransferStatus): string[] {
  return [
    `  transfer  ${t.id}: ${t.source} -> ${t.target}, ${t.state}${t.outcome_unknown ? ' (outcome unknown: retry with the same key to resolve it)' : ''}`,
    `  barrier   ${t.barrier}, target at ${t.frontier ?? 'no reading yet'}` +
      (t.last_reading_age_ms === null ? '' : ` (read ${seconds(t.last_reading_age_ms)} ago)`),
    `  age       ${seconds(t.age_ms)}, times out in ${seconds(t.deadline_in_ms)}`,
    `  by        ${t.actor}: ${t.reason}`,
  ];
}
