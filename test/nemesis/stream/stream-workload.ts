import { SystemClock } from '../../../framework/kernel/system-clock.js';
import type { SeededRng } from '../../../framework/testing/sim/seeded-rng.js';
import { eventually } from '../../hosts/eventually.js';
import { callJson } from '../http-json.js';
import type { OperationLog } from '../operation-log.js';
import type { Workload } from '../run-nemesis.js';
import {
  checkStreamHistory,
  type AppendInput,
  type AppendOutput,
  type StreamRead,
} from './stream-checks.js';
import { startStreamCluster, type StreamCluster } from './stream-cluster.js';

const STREAMS = 4;
const APPENDERS = 4;
/** Longer than a handoff's park (the target waits for it), shorter than a run. */
const APPEND_TIMEOUT_MS = 4_000;
const ADMIN_TIMEOUT_MS = 4_000;
/** Attempts of one batch (same producer seq) before the appender gives it up as unknown. */
const ATTEMPTS_PER_BATCH = 4;

/**
 * The stream workload: producers append numbered batches (producer id + seq, retried with the
 * same seq after an unknown outcome) to a few streams on real stream nodes, an operator moves
 * streams between nodes and drains a node now and then, while the nemesis kills, pauses and
 * partitions nodes and takes the shared object store away. Checked after healing: every
 * transfer settled, the nodes agree on every stream's owner and epoch, and the records read
 * back hold every acknowledged batch exactly once, at its acknowledged offsets, in order (see
 * stream-checks.ts for the whole list).
 */
export function streamWorkload(): Workload {
  let cluster: StreamCluster | undefined;
  const streams = Array.from({ length: STREAMS }, (_, i) => `s${i}`);

  return {
    name: 'stream',
    testFile: 'dist/test/nemesis/stream.test.js',
    progressOps: ['append'],

    async start(ctx) {
      cluster = await startStreamCluster(ctx);
      const ids = Object.keys(cluster.urls);
      for (const [i, stream] of streams.entries()) {
        const r = await callJson(`${cluster.urls[ids[0]]}/v1/admin/streams`, {
          body: { stream, node: ids[i % ids.length] },
          token: cluster.token,
          timeoutMs: 10_000,
        });
        if (r.kind !== 'answer' || r.status >= 300)
          throw new Error(`could not create stream ${stream}: ${JSON.stringify(r)}`);
      }
      return cluster;
    },

    clients(ctx, signal) {
      const c = cluster!;
      return [
        ...Array.from({ length: APPENDERS }, (_, i) =>
          appender(`p${i}`, ctx.rng.fork(`appender-${i}`), ctx.log, c, streams, signal),
        ),
        operator(ctx.rng.fork('operator'), ctx.log, c, streams, signal),
      ];
    },

    async check(ctx) {
      const c = cluster!;
      const problems: string[] = [];
      const ids = Object.keys(c.urls);
      // Undo drains, so every node takes streams again, then let every transfer settle.
      for (const id of ids)
        await callJson(`${c.urls[id]}/v1/admin/nodes/${id}/undrain`, {
          method: 'POST',
          token: c.token,
          timeoutMs: ADMIN_TIMEOUT_MS,
        });
      try {
        await eventually(
          async () => {
            const r = await callJson(`${c.urls[ctx.rng.pick(ids)]}/v1/admin/transfers`, {
              token: c.token,
              timeoutMs: 2_000,
            });
            return r.kind === 'answer' && r.status === 200 && r.body.transfers.length === 0;
          },
          'every transfer to settle after healing',
          40_000,
        );
      } catch (error) {
        problems.push(`${(error as Error).message}: ${JSON.stringify(await pendingTransfers(c))}`);
      }
      const views = await converge(c, streams).catch((error: Error) => {
        problems.push(error.message);
        return undefined;
      });
      const reads: Record<string, StreamRead> = {};
      for (const stream of streams) {
        try {
          reads[stream] = await readAll(c, stream, ctx.rng.pick(ids));
        } catch (error) {
          problems.push(`could not read stream ${stream} back: ${(error as Error).message}`);
        }
      }
      problems.push(...checkStreamHistory(ctx.log, reads, views));
      return problems;
    },

    stop: async () => cluster?.close(),
  };
}

/** One producer: batches of 1-3 records to a random stream, each batch retried under its seq. */
async function appender(
  producer: string,
  rng: SeededRng,
  log: OperationLog,
  c: StreamCluster,
  streams: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  const ids = Object.keys(c.urls);
  const seqs = new Map<string, number>();
  const owner = new Map<string, string>();
  while (!signal.aborted) {
    const stream = rng.pick(streams);
    const seq = seqs.get(stream) ?? 0;
    seqs.set(stream, seq + 1);
    const bodies = Array.from(
      { length: 1 + rng.int(3) },
      (_, i) => `${producer}/${stream}/${seq}/${i}`,
    );
    for (let attempt = 0; attempt < ATTEMPTS_PER_BATCH && !signal.aborted; attempt++) {
      const first = owner.get(stream) ?? rng.pick(ids);
      const pending = log.invoke<AppendInput, AppendOutput>(producer, 'append', {
        stream,
        producer,
        seq,
        bodies,
        node: first,
      });
      const outcome = await appendFollowingHints(c, { stream, producer, seq, bodies, node: first });
      if (outcome.kind === 'ok') {
        pending.ok(outcome.output, outcome.via);
        owner.set(stream, outcome.output.node);
        break;
      }
      if (outcome.kind === 'fail') pending.fail(outcome.via);
      else pending.unknown(outcome.via);
      owner.delete(stream);
      await clock.sleep(50 + rng.int(150));
    }
    await clock.sleep(5 + rng.int(20));
  }
}

type AppendOutcome =
  { kind: 'ok'; output: AppendOutput; via: string } | { kind: 'fail' | 'unknown'; via: string };

/**
 * One attempt of a batch as the bundled client makes it: sent to the node believed to own the
 * stream, following 409 not-owner hints for a few hops. Ok when a node acknowledged; fail when
 * every answer was a refusal made before the batch was logged (not-owner, stale sequence, the
 * store or the handoff unavailable: the README promises such a batch never appears); unknown
 * when any hop went unanswered or failed otherwise.
 */
async function appendFollowingHints(c: StreamCluster, input: AppendInput): Promise<AppendOutcome> {
  const ids = Object.keys(c.urls);
  const hops: string[] = [];
  let unknown = false;
  let node = input.node;
  for (let hop = 0; hop < 3; hop++) {
    const answer = await callJson(`${c.urls[node]}/v1/streams/${input.stream}/records`, {
      body: {
        records: input.bodies.map((body) => ({ body })),
        producer: { id: input.producer, seq: input.seq },
      },
      timeoutMs: APPEND_TIMEOUT_MS,
    });
    if (answer.kind !== 'answer') {
      hops.push(`${node}: ${answer.reason}`);
      if (answer.kind === 'lost') unknown = true;
      break;
    }
    const body = answer.body ?? {};
    if (answer.status === 200) {
      hops.push(node);
      return {
        kind: 'ok',
        output: {
          epoch: body.epoch,
          offsets: body.offsets,
          node: body.node,
          duplicate: body.duplicate,
        },
        via: hops.join(' -> '),
      };
    }
    const type = String(body.type ?? '').replace('urn:baton:problem:', '');
    hops.push(`${node} ${answer.status} ${type}`);
    const refusal =
      (answer.status === 409 || answer.status === 404 || answer.status === 503) && type !== '';
    if (!refusal) {
      unknown = true;
      break;
    }
    if (
      type !== 'not-owner' ||
      typeof body.owner !== 'string' ||
      !ids.includes(body.owner) ||
      body.owner === node
    )
      break;
    node = body.owner;
  }
  return { kind: unknown ? 'unknown' : 'fail', via: hops.join(' -> ') };
}

/** The operator: a transfer every second or so, at a random node; now and then a drain and its undo. */
async function operator(
  rng: SeededRng,
  log: OperationLog,
  c: StreamCluster,
  streams: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  const ids = Object.keys(c.urls);
  let drained: string | undefined;
  while (!signal.aborted) {
    await clock.sleep(600 + rng.int(900));
    if (signal.aborted) break;
    const at = rng.pick(ids);
    if (drained === undefined && rng.chance(0.15)) {
      const node = rng.pick(ids);
      if (
        (await admin(log, 'drain', { node }, c, at, `/v1/admin/nodes/${node}/drain`, {})) === 'ok'
      )
        drained = node;
      continue;
    }
    if (drained !== undefined && rng.chance(0.3)) {
      const node = drained;
      if (
        (await admin(log, 'undrain', { node }, c, at, `/v1/admin/nodes/${node}/undrain`, {})) ===
        'ok'
      )
        drained = undefined;
      continue;
    }
    const stream = rng.pick(streams);
    const target = rng.pick(ids.filter((id) => id !== drained));
    await admin(log, 'transfer', { stream, target }, c, at, '/v1/admin/transfers', {
      stream,
      target,
    });
  }
}

async function admin(
  log: OperationLog,
  f: string,
  input: Record<string, string>,
  c: StreamCluster,
  at: string,
  path: string,
  body: unknown,
): Promise<'ok' | 'fail' | 'unknown'> {
  const pending = log.invoke<Record<string, string>, unknown>('operator', f, { ...input, at });
  const answer = await callJson(`${c.urls[at]}${path}`, {
    method: 'POST',
    body,
    token: c.token,
    timeoutMs: ADMIN_TIMEOUT_MS,
  });
  if (answer.kind === 'refused') {
    pending.fail(answer.reason);
    return 'fail';
  }
  if (answer.kind === 'lost') {
    pending.unknown(answer.reason);
    return 'unknown';
  }
  if (answer.status < 300) {
    pending.ok(answer.body);
    return 'ok';
  }
  if (answer.status === 409 || answer.status === 404 || answer.status === 400) {
    pending.fail(`${answer.status} ${answer.body?.detail ?? ''}`);
    return 'fail';
  }
  pending.unknown(`${answer.status} ${answer.body?.detail ?? ''}`);
  return 'unknown';
}

async function pendingTransfers(c: StreamCluster): Promise<unknown> {
  const first = Object.values(c.urls)[0];
  const r = await callJson(`${first}/v1/admin/transfers`, { token: c.token, timeoutMs: 2_000 });
  return r.kind === 'answer' ? r.body : r;
}

/** Waits until every node describes every stream alike (owner, epoch, state); returns that view. */
async function converge(
  c: StreamCluster,
  streams: readonly string[],
): Promise<Record<string, { owner: string; epoch: number }>> {
  let last: string[] = [];
  let agreed: Record<string, { owner: string; epoch: number }> = {};
  try {
    await eventually(
      async () => {
        const views = await Promise.all(
          Object.entries(c.urls).map(async ([id, url]) => {
            const described: Record<string, unknown> = {};
            for (const stream of streams) {
              const r = await callJson(`${url}/v1/streams/${stream}`, { timeoutMs: 2_000 });
              if (r.kind !== 'answer' || r.status !== 200) return `${id}: no answer for ${stream}`;
              described[stream] = { owner: r.body.owner, epoch: r.body.epoch, state: r.body.state };
            }
            return JSON.stringify(described);
          }),
        );
        last = views;
        if (!views.every((v) => v === views[0]) || views[0].includes('no answer')) return false;
        agreed = JSON.parse(views[0]);
        return true;
      },
      'every node to agree on every stream (owner, epoch, state)',
      20_000,
    );
  } catch (error) {
    throw new Error(
      `nodes did not converge after healing: ${(error as Error).message}\n${last.join('\n')}`,
    );
  }
  return agreed;
}

async function readAll(c: StreamCluster, stream: string, node: string): Promise<StreamRead> {
  const records: StreamRead = [];
  for (let from = 0; ;) {
    const r = await callJson(
      `${c.urls[node]}/v1/streams/${stream}/records?from=${from}&limit=1000`,
      { timeoutMs: 10_000 },
    );
    if (r.kind !== 'answer' || r.status !== 200)
      throw new Error(`${node} answered ${JSON.stringify(r).slice(0, 300)}`);
    records.push(...(r.body.records as StreamRead));
    if (r.body.records.length === 0) return records;
    from = r.body.next;
  }
}
