import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { eventually } from '../../hosts/eventually.js';
import { callJson } from '../http-json.js';
import type { OperationLog } from '../operation-log.js';
import type { WorkloadFault } from '../cluster.js';
import type { Workload } from '../run-nemesis.js';
import { quantile } from '../run-summary.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ADMIN_TIMEOUT_MS, livenessView, pendingTransfers, recordedAdmin } from './stream-admin.js';
import {
  checkFailovers,
  checkStreamHistory,
  checkTransferSamples,
  failoverTimes,
  type AppendInput,
  type AppendOutput,
  type StreamRead,
  type TransferSample,
} from './stream-checks.js';
import { etcdFaults } from '../etcd-faults.js';
import {
  gauge,
  startStreamCluster,
  type StreamCluster,
  type StreamMetadataStore,
} from './stream-cluster.js';
import { streamFaults, type FailoverEvent } from './stream-faults.js';

const STREAMS = 4;
const APPENDERS = 4;
/** Longer than a handoff's park (the target waits for it), shorter than a run. */
const APPEND_TIMEOUT_MS = 4_000;
/** Attempts of one batch (same producer seq) before the appender gives it up as unknown. */
const ATTEMPTS_PER_BATCH = 4;

/**
 * The stream workload: producers append numbered batches (producer id + seq, retried with the
 * same seq after an unknown outcome) to a few streams on real stream nodes, an operator moves
 * streams between nodes, while the nemesis kills, pauses and partitions nodes, takes the shared
 * object store away, drains nodes and kills nodes for a failover (automatic, or POSTed by the
 * operator once the node is Dead). Checked after healing: every transfer settled, no pending
 * transfer ever named a Dead target, every killed node's streams failed over, the nodes agree
 * on every stream's owner and epoch, and the records read back hold every acknowledged batch
 * exactly once, at its acknowledged offsets, in order, one node acknowledging per stream at a
 * time (see stream-checks.ts for the whole list).
 */
export function streamWorkload(
  metadata: StreamMetadataStore = 'raft',
  variation: StreamWorkloadVariation = {},
): Workload {
  let cluster: StreamCluster | undefined;
  const streams = Array.from({ length: STREAMS }, (_, i) => `s${i}`);
  const failovers: FailoverEvent[] = [];
  const samples: TransferSample[] = [];

  return {
    name: variation.name ?? (metadata === 'etcd' ? 'stream-etcd' : 'stream'),
    testFile:
      variation.testFile ??
      (metadata === 'etcd'
        ? 'dist/test/nemesis/stream-etcd.test.js'
        : 'dist/test/nemesis/stream.test.js'),
    progressOps: ['append'],

    async start(ctx) {
      cluster = await startStreamCluster(
        ctx,
        metadata,
        variation.nodeOptions,
        variation.raftOptions,
      );
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
      cluster.faults = variation.faults
        ? variation.faults(cluster)
        : streamFaults(cluster, ctx.log, ctx.rng.fork('faults'), failovers);
      if (cluster.etcd)
        cluster.faults.push(
          ...etcdFaults(cluster.members, cluster.firewall, cluster.etcd, ctx.rng.fork('etcd')),
        );
      return cluster;
    },

    clients(ctx, signal) {
      const c = cluster!;
      return [
        ...Array.from({ length: APPENDERS }, (_, i) =>
          appender(`p${i}`, ctx.rng.fork(`appender-${i}`), ctx.log, c, streams, signal),
        ),
        operator(ctx.rng.fork('operator'), ctx.log, c, streams, signal),
        transferWatcher(ctx.rng.fork('watcher'), c, samples, signal),
      ];
    },

    async check(ctx) {
      const c = cluster!;
      const problems: string[] = [];
      const ids = Object.keys(c.urls);
      // Undo drains, so every node takes streams again, then let every transfer settle and
      // every node be published alive again.
      for (const id of ids)
        await callJson(`${c.urls[id]}/v1/admin/nodes/${id}/undrain`, {
          method: 'POST',
          token: c.token,
          timeoutMs: ADMIN_TIMEOUT_MS,
        });
      try {
        await eventually(
          async () => {
            const at = ctx.rng.pick(ids);
            const pending = await pendingTransfers(c, at);
            const liveness = await livenessView(c, at);
            return (
              pending?.length === 0 &&
              liveness !== undefined &&
              Object.values(liveness).every((l) => l === 'Alive')
            );
          },
          'every transfer to settle and every node to be alive after healing',
          40_000,
        );
      } catch (error) {
        const at = ids[0];
        problems.push(
          `${(error as Error).message}: transfers ${JSON.stringify(await pendingTransfers(c, at))}, nodes ${JSON.stringify(await livenessView(c, at))}`,
        );
      }
      const final = await pendingTransfers(c, ids[0]);
      const finalLiveness = await livenessView(c, ids[0]);
      if (final && finalLiveness)
        samples.push({ at: ids[0], before: final, liveness: finalLiveness, after: final });
      const views = await converge(c, streams).catch((error: Error) => {
        problems.push(error.message);
        return undefined;
      });
      // The same applied state: with the nodes' own Raft, every member at one applied index.
      if (!c.etcd) {
        let applied: Array<number | undefined> = [];
        try {
          await eventually(
            async () => {
              applied = await Promise.all(
                Object.values(c.urls).map((url) => gauge(url, 'baton_consensus_applied_index')),
              );
              return applied[0] !== undefined && applied.every((a) => a === applied[0]);
            },
            'every member to apply the metadata log to the same index',
            20_000,
          );
        } catch (error) {
          problems.push(`${(error as Error).message}: ${JSON.stringify(applied)}`);
        }
      }
      const reads: Record<string, StreamRead> = {};
      for (const stream of streams) {
        try {
          reads[stream] = await readAll(c, stream, ctx.rng.pick(ids));
        } catch (error) {
          problems.push(`could not read stream ${stream} back: ${(error as Error).message}`);
        }
      }
      problems.push(...checkStreamHistory(ctx.log, reads, views));
      problems.push(...checkTransferSamples(samples));
      problems.push(...checkFailovers(failovers));
      if (problems.length > 0) {
        await writeFile(join(ctx.dir, 'transfer-samples.json'), JSON.stringify(samples, null, 1));
        await writeFile(join(ctx.dir, 'failovers.json'), JSON.stringify(failovers, null, 1));
      }
      return problems;
    },

    summaryLines(ctx) {
      const times = failoverTimes(ctx.log, failovers);
      const line = (label: string, ms: number[]) => {
        const sorted = [...ms].sort((a, b) => a - b);
        return sorted.length === 0
          ? `  ${label}: none`
          : `  ${label}: median ${quantile(sorted, 0.5)} ms, max ${sorted[sorted.length - 1]} ms (${sorted.length})`;
      };
      return [
        `  stream failovers: ${failovers.filter((f) => f.trigger === 'automatic').length} automatic, ${failovers.filter((f) => f.trigger === 'operator').length} by the operator, ${failovers.filter((f) => f.movedAt === undefined).length} not moved while the run lasted`,
        line('failover, kill to new owners in the metadata', times.moved),
        line('failover, kill to first append acknowledged by a new owner', times.served),
      ];
    },

    stop: async () => cluster?.close(),
  };
}

/** The same workload run another way: its own name, node and Raft options, faults of its own. */
export interface StreamWorkloadVariation {
  name?: string;
  testFile?: string;
  nodeOptions?: Record<string, unknown>;
  raftOptions?: Record<string, unknown>;
  /** The workload faults instead of the stream variant's failovers and drains. */
  faults?: (cluster: StreamCluster) => WorkloadFault[];
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
 * store down or the buffer full: the README promises such a batch never appears); unknown when
 * any hop went unanswered or failed otherwise (a lapsed lease's 503 may follow the store).
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
      token: c.token,
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
    // A 503 is a refusal only when it says so before logging (the store down, the buffer
    // full); one whose lease lapsed may come after the batch was stored (a retry finds it as a
    // duplicate), so it is unknown, like a stopped node's.
    const refusedBeforeLogging =
      answer.status !== 503 ||
      /object store is unavailable|buffer is full/.test(String(body.detail ?? ''));
    const refusal =
      (answer.status === 409 || answer.status === 404 || answer.status === 503) &&
      type !== '' &&
      refusedBeforeLogging;
    if (!refusal) {
      if (answer.status === 503)
        hops[hops.length - 1] += ` (${String(body.detail ?? '').slice(0, 80)})`;
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

/** The operator: a transfer every second or so, at a random node, to a random node. */
async function operator(
  rng: SeededRng,
  log: OperationLog,
  c: StreamCluster,
  streams: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  const ids = Object.keys(c.urls);
  while (!signal.aborted) {
    await clock.sleep(600 + rng.int(900));
    if (signal.aborted) break;
    const stream = rng.pick(streams);
    const target = rng.pick(ids);
    await recordedAdmin(
      log,
      'operator',
      'transfer',
      { stream, target },
      c,
      rng.pick(ids),
      '/v1/admin/transfers',
      {
        stream,
        target,
      },
    );
  }
}

/**
 * Samples the pending transfers around a liveness read (transfers, nodes, transfers again, all
 * linearizable reads at one node): a transfer present in both listings was pending when the
 * liveness was read, so its target must not have been Dead then.
 */
async function transferWatcher(
  rng: SeededRng,
  c: StreamCluster,
  samples: TransferSample[],
  signal: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  const ids = Object.keys(c.urls);
  while (!signal.aborted) {
    await clock.sleep(200 + rng.int(300));
    const at = rng.pick(ids);
    const before = await pendingTransfers(c, at);
    const liveness = before && (await livenessView(c, at));
    const after = liveness && (await pendingTransfers(c, at));
    if (before && liveness && after) samples.push({ at, before, liveness, after });
  }
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
              const r = await callJson(`${url}/v1/streams/${stream}`, { token: c.token, timeoutMs: 2_000 });
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
      { token: c.token, timeoutMs: 10_000 },
    );
    if (r.kind !== 'answer' || r.status !== 200)
      throw new Error(`${node} answered ${JSON.stringify(r).slice(0, 300)}`);
    records.push(...(r.body.records as StreamRead));
    if (r.body.records.length === 0) return records;
    from = r.body.next;
  }
}
