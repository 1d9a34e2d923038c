import { createInterface } from 'node:readline';
import { InvalidArgumentError, type Command } from 'commander';
import { integerAtLeast } from '../arguments.js';
import { cliCall, type StreamApi } from '../api-client.js';
import { UsageError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions, type Connection } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import {
  MAX_READ_LIMIT,
  MAX_RECORDS_PER_APPEND,
  type StreamPlacement,
} from '@baton/stream-transfer';
import type { AppendAnswer, ReadAnswer } from '@baton/client';
import { APPEND_RETRIES, STREAM_API, streamNode } from './stream-api.js';

/** Body bytes per append request: half the API's body limit, leaving room for JSON escaping. */
const APPEND_BATCH_BYTES = 1024 * 1024;

/** `baton streams create | append | read | status`: the life of one stream. */
export function registerStreamCommands(streams: Command, ctx: CliContext): void {
  withConnectionOptions(streams.command('create'), STREAM_API)
    .description('create a stream, placed on the node with the most free slots or on --owner')
    .argument('<name>', "the stream's id: letters, digits, '.', '_' or '-'")
    .option('--owner <node>', 'place it on this node instead of letting the cluster choose')
    .option('--require <label=value>', 'only nodes with this label may own it (repeatable)', collectLabel, {})
    .option('--prefer <label=value>', 'nodes with this label are chosen first (repeatable)', collectLabel, {})
    .option('--spread <group:label>', "spread the streams of GROUP evenly over the values of LABEL (e.g. topic-a:zone)")
    .addHelpText(
      'after',
      `
Creating a stream that exists with the same placement is not an error (it says so).

A placement stays with the stream: every transfer, drain, rebalance and failover respects its
required labels and its spread; one that cannot answers 409 placement-unsatisfiable.

Examples:
  baton streams create events
  baton streams create audit-log --owner n2 --url http://127.0.0.1:7700 --token $TOKEN
  baton streams create orders-0 --spread orders:zone --prefer disk=ssd
  baton streams create billing --require zone=z1`,
    )
    .action(async (name: string, options: { owner?: string; require: Record<string, string>; prefer: Record<string, string>; spread?: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamNode(connectionOf(ctx, command, STREAM_API));
      const placement = placementOf(options);
      const created = await cliCall(
        client.POST('/v1/admin/streams', { body: { stream: name, ...(options.owner ? { node: options.owner } : {}), ...(placement ? { placement } : {}) } }),
      );
      output.result(created, (c) =>
        c.duplicate
          ? `stream ${c.stream} already exists on ${c.owner} (epoch ${c.epoch})`
          : `created stream ${c.stream} on ${c.owner} (epoch ${c.epoch})`,
      );
    });

  withConnectionOptions(streams.command('append'), STREAM_API)
    .description('append records to a stream: each BODY is one record, or each line of stdin')
    .argument('<name>', 'the stream to append to')
    .argument('[body...]', 'record bodies; without any, the lines of stdin are appended')
    .option(
      '--producer <id>',
      'append as this producer, so a retry with the same --seq is never appended twice',
    )
    .option(
      '--seq <n>',
      'sequence number of the first batch with --producer (each batch takes the next)',
      integerAtLeast(0),
    )
    .addHelpText(
      'after',
      `
The client sends each record to the stream's owner, follows the cluster's redirects and waits
out a handoff in progress. Stdin is sent in batches of up to ${MAX_RECORDS_PER_APPEND} records.

Examples:
  baton streams append events '{"id":1}' '{"id":2}'
  tail -f app.log | baton streams append logs
  baton streams append events hello --producer importer-7 --seq 41`,
    )
    .action(
      async (
        name: string,
        bodies: string[],
        options: { producer?: string; seq?: number },
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        if (options.seq !== undefined && options.producer === undefined) {
          throw new UsageError('--seq numbers the batches of a producer: give --producer too');
        }
        // An append follows the owner's hints and waits out a handoff, as its help says.
        const client = streamNode(connectionOf(ctx, command, STREAM_API), { retry: APPEND_RETRIES });
        let records = bodies;
        if (records.length === 0) {
          if (ctx.stdin.isTTY)
            output.note('reading records from stdin, one per line; end with Ctrl-D');
          records = await readLines(ctx.stdin);
        }
        if (records.length === 0) {
          throw new UsageError(
            'nothing to append: give record bodies as arguments or pipe lines on stdin',
          );
        }
        const answers: AppendAnswer[] = [];
        for (const batch of batches(records)) {
          // Each batch of a producer takes the next seq, kept across every retry of it.
          const producer = options.producer ? { id: options.producer, seq: (options.seq ?? 0) + answers.length } : undefined;
          answers.push(await append(client, name, batch, producer));
        }
        const summary = {
          stream: name,
          appended: records.length,
          first: answers[0].first,
          last: answers[answers.length - 1].first + answers[answers.length - 1].count - 1,
          epoch: answers[answers.length - 1].epoch,
          node: answers[answers.length - 1].node,
          duplicate: answers.some((a) => a.duplicate),
          ...(options.producer ? { nextSeq: (options.seq ?? 0) + answers.length } : {}),
          batches: answers,
        };
        output.result(summary, (s) => [
          `appended ${s.appended} record${s.appended === 1 ? '' : 's'} to ${s.stream}: ` +
            `${s.first === s.last ? `offset ${s.first}` : `offsets ${s.first}-${s.last}`} (epoch ${s.epoch} on ${s.node})`,
          ...(s.duplicate
            ? [
                'some batches had been appended before under the same producer and seq: they were not appended again',
              ]
            : []),
          ...(s.nextSeq !== undefined
            ? [`next --seq for producer ${options.producer}: ${s.nextSeq}`]
            : []),
        ]);
      },
    );

  withConnectionOptions(streams.command('read'), STREAM_API)
    .description('read records of a stream from an offset (any node serves reads)')
    .argument('<name>', 'the stream to read')
    .option('--from <offset>', 'first offset to read', integerAtLeast(0), 0)
    .option('--limit <n>', 'most records to read', integerAtLeast(1), 100)
    .option('-f, --follow', 'after the records there are, wait for new ones and print them as they become durable, until Ctrl-C')
    .addHelpText(
      'after',
      `
Human output is one record per line, its offset, a tab, then its body; the offset to continue
from is printed on stderr. With --json: {stream, from, records: [{offset, body}], next}; with
--follow --json, one such document per line for each batch that arrives.

--follow asks the node to hold each read up to ${FOLLOW_WAIT_SECONDS} s until a record is durable (a long
poll), then asks again from the next offset; --limit bounds each batch.

Examples:
  baton streams read events
  baton streams read events --from 1000 --limit 5000 --json | jq -r '.records[].body'
  baton streams read events --follow`,
    )
    .action(async (name: string, options: { from: number; limit: number; follow?: boolean }, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamNode(connectionOf(ctx, command, STREAM_API));
      if (options.follow) {
        await follow(ctx, output, connectionOf(ctx, command, STREAM_API), name, options);
        return;
      }
      const records: ReadAnswer['records'] = [];
      let next = options.from;
      // The API serves at most MAX_READ_LIMIT per request: page until the limit or the tail.
      while (records.length < options.limit) {
        const want = Math.min(MAX_READ_LIMIT, options.limit - records.length);
        const page = await read(client, name, next, want);
        records.push(...page.records);
        next = page.next;
        if (page.records.length < want) break;
      }
      // An empty read prints nothing on stdout, so `| wc -l` counts records.
      if (output.machine || records.length > 0) {
        output.result({ stream: name, from: options.from, records, next }, (r) =>
          r.records.map((record) => `${record.offset}\t${record.body}`),
        );
      }
      output.note(
        records.length === 0
          ? `no records at offset ${options.from} or after`
          : `next offset: ${next} (baton streams read ${name} --from ${next})`,
      );
    });

  withConnectionOptions(streams.command('status'), STREAM_API)
    .description("show a stream's owner, epoch, tail and any transfer in progress")
    .argument('<name>', 'the stream to describe')
    .addHelpText(
      'after',
      `
Examples:
  baton streams status events
  baton streams status events --json`,
    )
    .action(async (name: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamNode(connectionOf(ctx, command, STREAM_API));
      const status: StreamStatus = await cliCall(client.GET('/v1/streams/{stream}', { params: { path: { stream: name } } }));
      output.result(status, (s) => [
        `stream ${s.stream}`,
        `  owner     ${s.owner}${s.address ? ` (${s.address})` : ''}`,
        `  epoch     ${s.epoch} (${s.state})`,
        `  tail      ${s.tail}`,
        s.transfer
          ? `  transfer  ${s.transfer.source} -> ${s.transfer.target} (${s.transfer.reason}), pending`
          : '  transfer  none',
      ]);
    });
}

/** How long each follow read asks the node to wait for a record. */
const FOLLOW_WAIT_SECONDS = 20;

/**
 * Prints records as they become durable, batch by batch, until Ctrl-C (or SIGTERM): then the
 * offset to resume from goes to stderr and the command ends with 0.
 */
async function follow(
  ctx: CliContext,
  output: ReturnType<typeof outputFor>,
  connection: Connection,
  name: string,
  options: { from: number; limit: number },
): Promise<void> {
  let next = options.from;
  const stop = new AbortController();
  const stopping = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // The node holds each read up to the wait: the request may take that long, and no more.
  const client = streamNode(connection, { timeoutMs: (FOLLOW_WAIT_SECONDS + 10) * 1000, stop: stop.signal });
  const stopped = () => stop.signal.aborted;
  output.note(`following ${name} from offset ${next}; Ctrl-C stops`);
  while (!stopped()) {
    const want = Math.min(MAX_READ_LIMIT, options.limit);
    const page = await Promise.race([read(client, name, next, want, FOLLOW_WAIT_SECONDS), stopping.then(() => undefined)]);
    if (!page) break;
    if (page.records.length > 0) {
      if (output.json) ctx.stdout.write(`${JSON.stringify({ stream: name, from: next, records: page.records, next: page.next })}\n`);
      else ctx.stdout.write(page.records.map((record) => `${record.offset}\t${record.body}\n`).join(''));
    }
    next = page.next;
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  output.note(`stopped; next offset: ${next} (baton streams read ${name} --from ${next} --follow)`);
}

/** One batch appended: on the owner, however many hints and handoff waits it takes. */
function append(client: StreamApi, stream: string, bodies: string[], producer?: { id: string; seq: number }): Promise<AppendAnswer> {
  const body = { records: bodies.map((b) => ({ body: b })), ...(producer ? { producer } : {}) };
  return cliCall(client.POST('/v1/streams/{stream}/records', { params: { path: { stream } }, body }));
}

/** Records from `from` on; with `waitSeconds`, a long poll answered once one is durable, or empty after the wait. */
function read(client: StreamApi, stream: string, from: number, limit: number, waitSeconds = 0): Promise<ReadAnswer> {
  const query = { from, limit, ...(waitSeconds > 0 ? { wait: waitSeconds } : {}) };
  return cliCall(client.GET('/v1/streams/{stream}/records', { params: { path: { stream }, query } }));
}

interface StreamStatus {
  stream: string;
  owner: string;
  address?: string;
  epoch: number;
  state: string;
  tail: number;
  transfer?: { source: string; target: string; reason: string };
}

async function readLines(input: NodeJS.ReadableStream): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input, crlfDelay: Infinity, terminal: false })) {
    lines.push(line);
  }
  return lines;
}

/** Records in request-sized batches: at most MAX_RECORDS_PER_APPEND, about a MiB of bodies. */
function* batches(records: readonly string[]): Generator<string[]> {
  let batch: string[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = Buffer.byteLength(record);
    if (
      batch.length > 0 &&
      (batch.length >= MAX_RECORDS_PER_APPEND || bytes + size > APPEND_BATCH_BYTES)
    ) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(record);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/** --require/--prefer label=value, repeatable: collected into one object. */
function collectLabel(raw: string, labels: Record<string, string>): Record<string, string> {
  const at = raw.indexOf('=');
  if (at <= 0 || at === raw.length - 1) throw new InvalidArgumentError(`give label=value, got "${raw}"`);
  return { ...labels, [raw.slice(0, at)]: raw.slice(at + 1) };
}

/** The placement the options ask for, or undefined when they ask for none. */
function placementOf(options: { require: Record<string, string>; prefer: Record<string, string>; spread?: string }): StreamPlacement | undefined {
  const placement: StreamPlacement = {};
  if (Object.keys(options.require).length > 0) placement.require = options.require;
  if (Object.keys(options.prefer).length > 0) placement.prefer = options.prefer;
  if (options.spread !== undefined) {
    const [group, by, ...rest] = options.spread.split(':');
    if (!group || !by || rest.length > 0) throw new UsageError(`--spread takes group:label (e.g. topic-a:zone), got "${options.spread}"`);
    placement.spread = { group, by };
  }
  return Object.keys(placement).length > 0 ? placement : undefined;
}
