import type { Command } from 'commander';
import { integerAtLeast } from '../arguments.js';
import { authorityControlApi, cliCall, type StreamApi } from '../api-client.js';
import { FailedError, UsageError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions, type Connection } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { shellWord } from '../shell-word.js';
import { table } from '../table.js';
import {
  MAX_AUDIT_PAGE,
  STREAM_AUDIT_KINDS,
  verifyAuditTrail,
  type AuditRecordView,
} from '@baton/stream-transfer';
import { STREAM_API, streamNode } from '../streams/stream-api.js';
import { AUTHORITY_CONTROL } from '../authority/control-api.js';
import { AUTHORITY_AUDIT_KINDS } from '@baton/authority-transfer';
import type { AuthorityControlOperations } from '@baton/client';
import { verifyAuthorityTrail } from './authority-trail-verify.js';

const DEFAULT_LIMIT = 50;

/** One record as a row: when, what, about what, from where to where, who, why. */
function row(r: AuditRecordView): string[] {
  const epochs = r.epoch_before === undefined ? String(r.epoch_after) : `${r.epoch_before}->${r.epoch_after}`;
  return [
    r.id,
    r.time === undefined ? '-' : new Date(r.time).toISOString(),
    r.kind ?? 'planned_transfer',
    `${r.subject_type ?? 'authority'}/${r.subject ?? r.authority}`,
    `${r.from ?? '-'} -> ${r.to ?? '-'}`,
    epochs,
    r.actor,
    r.cause ?? '-',
    r.reason,
  ];
}

const COLUMNS = ['ID', 'TIME', 'KIND', 'SUBJECT', 'MOVE', 'EPOCH', 'ACTOR', 'CAUSE', 'REASON'];

/** `baton audit list|show|verify`: the audit trail a stream node's store holds. */
export function registerAudit(program: Command, ctx: CliContext): void {
  const audit = program
    .command('audit')
    .description("read and verify the audit trail: every ownership change, as a node's audit store holds it")
    .addHelpText(
      'after',
      `
Every change of an owner (a stream created, transferred, failed over; a node drained, its
liveness changed; a rebalance planned) is sealed by the metadata state machine and stored by
every member in its own audit store. Each record names the hash of the one before it, so
"baton audit verify" tells whether a store's copy was edited.

Examples:
  baton audit list
  baton audit list --subject orders --kind transfer_completed
  baton audit show 1207-0 -o yaml
  baton audit verify --url http://127.0.0.1:7701
  baton audit verify --authority proj --url http://127.0.0.1:7601`,
    );

  withConnectionOptions(audit.command('list'), STREAM_API)
    .description('one page of the trail, newest first')
    .option('--subject <id>', 'only records about this stream, node, or "cluster"')
    .option('--kind <kind>', `only records of this kind (${STREAM_AUDIT_KINDS.join(', ')}; on an authority node: ${AUTHORITY_AUDIT_KINDS.join(', ')})`)
    .option('--before <id>', 'only records older than this one (the "next" of the previous page)')
    .option('--limit <n>', `records per page (at most ${MAX_AUDIT_PAGE})`, integerAtLeast(1, MAX_AUDIT_PAGE), DEFAULT_LIMIT)
    .option('--authority <name>', "list this authority's trail from an authority node's control listener (--url) instead")
    .action(async (options: { subject?: string; kind?: string; before?: string; limit: number; authority?: string }, command: Command) => {
      const output = outputFor(ctx, command);
      if (options.subject !== undefined && options.authority !== undefined) throw new UsageError('--authority names the trail on an authority node: give it without --subject');
      const { authority, ...asked } = options;
      const page = authority === undefined ? await streamPage(streamNode(connectionOf(ctx, command, STREAM_API)), asked) : await authorityPage(connectionOf(ctx, command, AUTHORITY_CONTROL), authority, asked);
      output.result(
        page,
        (p, view) => pageLines(p, options, view.headers),
        (p) => p.records.map((r) => r.id),
      );
    });

  withConnectionOptions(audit.command('show'), STREAM_API)
    .description('one record, every field')
    .argument('<id>', "the record id (<commit_index>-<seq>; on an authority node also a planned transfer's key)")
    .option('--authority', "read it from an authority node's control listener (--url) instead")
    .action(async (id: string, options: { authority?: boolean }, command: Command) => {
      const output = outputFor(ctx, command);
      const record = options.authority ? await authorityRecord(connectionOf(ctx, command, AUTHORITY_CONTROL), id) : await cliCall(streamNode(connectionOf(ctx, command, STREAM_API)).GET('/v1/admin/audit/{id}', { params: { path: { id } } }));
      output.result(
        record,
        (r) => Object.entries(r).map(([field, value]) => `${field.padEnd(13)} ${value === null ? '-' : String(value)}`),
        (r) => [r.id],
      );
    });

  withConnectionOptions(audit.command('verify'), STREAM_API)
    .description("recompute the trail's hash chain from the node's audit store and check it against the replicated anchors")
    .option('--authority <name>', "verify this authority's trail on an authority node's control listener (--url), instead of a stream node's trail")
    .addHelpText(
      'after',
      `
Reads the whole trail from the node given (its own store), oldest first, recomputes every
record's hash and its link to the one before, and compares the chain head and anchors the
replicated state keeps. Exit 0 when it matches; exit 1 naming the first record that does not.
An authority node keeps one trail per authority: name it with --authority, and give --url the
control listener "baton up --variant authority" printed.`,
    )
    .action(async (options: { authority?: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const { chain, verdict } = options.authority === undefined ? await streamTrail(ctx, command) : await authorityTrail(ctx, command, options.authority);
      if (verdict.ok) {
        const report = { trail: chain.trail, ...verdict };
        output.result(report, (r) =>
          r.behind
            ? `trail ${r.trail}: ${r.checked} records verified; this store has not yet stored up to the chain head (commit ${chain.head?.commit_index}): its projection is behind`
            : `trail ${r.trail}: ${r.checked} records verified, the chain matches the replicated anchors`,
        );
        return;
      }
      output.result({ trail: chain.trail, ...verdict }, () => []);
      throw new FailedError(
        'audit_chain_broken',
        `trail ${chain.trail}: record ${verdict.id} (commit ${verdict.commit_index}, seq ${verdict.seq}) does not match: ${verdict.why}; ${verdict.checked} records before it verified`,
      );
    });
}

/** The stream cluster's one trail, from a stream node. */
async function streamTrail(ctx: CliContext, command: Command) {
  const client = streamNode(connectionOf(ctx, command, STREAM_API));
  const chain = await cliCall(client.GET('/v1/admin/audit/chain'));
  const newestFirst: AuditRecordView[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await streamPage(client, { limit: MAX_AUDIT_PAGE, ...(before ? { before } : {}) });
    newestFirst.push(...page.records);
    if (page.next === null) break;
    before = page.next;
  }
  return { chain, verdict: verifyAuditTrail(newestFirst.reverse(), { anchors: chain.anchors, ...(chain.head ? { head: chain.head } : {}) }) };
}

/** One page of a trail as the listing prints it, whichever variant's listener answered it. */
interface AuditPage {
  trail: string;
  records: AuditRecordView[];
  next: string | null;
}

/** One page of the stream cluster's trail, newest first, as the node's own audit store holds it. */
async function streamPage(client: StreamApi, asked: { subject?: string; kind?: string; before?: string; limit?: number }): Promise<AuditPage> {
  const query = Object.fromEntries(Object.entries(asked).filter(([, value]) => value !== undefined));
  return cliCall(client.GET('/v1/admin/audit', { params: { query } }));
}

/** One page of an authority's trail from an authority node's control listener, in the stream listing's shape. */
async function authorityPage(connection: Connection, authority: string, asked: { kind?: string; before?: string; limit: number }): Promise<AuditPage> {
  // --kind and --before go as the operator typed them: the member judges them, in its own words.
  const query = { subject: authority, limit: asked.limit, ...(asked.kind ? { kind: asked.kind } : {}), ...(asked.before ? { before: asked.before } : {}) } as AuthorityAuditQuery;
  const body = await cliCall(authorityControlApi(connection).GET('/availability/v1/audit', { params: { query } }));
  return { trail: body.authority, records: body.records, next: body.next === null ? null : String(body.next) };
}

type AuthorityAuditQuery = NonNullable<AuthorityControlOperations['listAudit']['parameters']['query']>;

async function authorityRecord(connection: Connection, id: string): Promise<AuditRecordView> {
  return cliCall(authorityControlApi(connection).GET('/availability/v1/audit/{id}', { params: { path: { id } } }));
}

/** One authority's trail, from an authority node's control listener. */
async function authorityTrail(ctx: CliContext, command: Command, authority: string) {
  const { trail, head, verdict } = await verifyAuthorityTrail(connectionOf(ctx, command, AUTHORITY_CONTROL), authority);
  return { chain: { trail, head }, verdict };
}

function pageLines(page: AuditPage, asked: { subject?: string; kind?: string; limit: number }, headers: boolean): string | string[] {
  if (page.records.length === 0) return headers ? 'no audit records' : [];
  const rows = table(COLUMNS, page.records.map(row), { headers });
  if (!headers || page.next === null) return rows;
  const filters = [
    asked.subject ? ` --subject ${shellWord(asked.subject)}` : '',
    asked.kind ? ` --kind ${asked.kind}` : '',
    asked.limit === DEFAULT_LIMIT ? '' : ` --limit ${asked.limit}`,
  ].join('');
  return [...rows, `next page: baton audit list${filters} --before ${page.next}`];
}
