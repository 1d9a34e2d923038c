import { join } from 'node:path';
import { callJson } from '../http-json.js';
import type { Workload } from '../run-nemesis.js';
import { aimedKillLines, durableKillFaults, type AimedKills } from '../durable-kill-faults.js';
import { raftSnapshotWindow, storePutWindow, walCompactionWindow } from '../durable-windows.js';
import { gauge } from '../stream/stream-cluster.js';
import { streamWorkload } from '../stream/stream-workload.js';

/** Small enough that the appenders' traffic compacts every node's WAL every second or so. */
const WAL_COMPACTION_BYTES = 4_096;
/** A snapshot every few transfers, and a short retained tail, so a member down a few seconds installs one. */
export const RAFT_SNAPSHOTS = { snapshotInterval: 4, snapshotRetain: 1 };

/** The aimed kills of the stream variant, by the fault kind the nemesis draws. */
export const STREAM_DURABLE_KINDS = {
  compaction: 'kill-in-wal-compaction',
  put: 'kill-in-object-put',
  install: 'kill-in-snapshot-install',
} as const;

/**
 * The stream workload (appenders, operator transfers, the same checks: every acknowledged
 * record read back once, at its offset, in order) with kills aimed at a node's durable paths
 * instead of the usual faults: a WAL compaction (compacting every 4 KiB appended), a put into
 * the shared fs object store (a flushed segment, a lease renewal), and a Raft snapshot
 * installed from the leader by a node left behind while it was down. `kills` counts where the
 * kills landed; a node that does not serve again after one is a problem of the run.
 */
export function streamDurableWorkload(kills: AimedKills): Workload {
  let fillers = 0;
  const inner = streamWorkload('raft', {
    name: 'stream-durable',
    testFile: 'dist/test/nemesis/stream-durable.test.js',
    nodeOptions: { walCompactionBytes: WAL_COMPACTION_BYTES },
    raftOptions: RAFT_SNAPSHOTS,
    faults: (cluster) =>
      durableKillFaults(
        cluster,
        [
          {
            kind: STREAM_DURABLE_KINDS.compaction,
            windowOf: (m) => walCompactionWindow(join(m.dir, 'wal')),
          },
          {
            kind: STREAM_DURABLE_KINDS.put,
            windowOf: (m) =>
              storePutWindow(
                'a put into the fs object store',
                join(m.dir, '..', 'objects'),
                m.process,
              ),
          },
        ],
        {
          kind: STREAM_DURABLE_KINDS.install,
          windowOf: (m, above) =>
            raftSnapshotWindow('a Raft snapshot install', join(m.dir, 'raft'), above),
          appliedIndex: (id) => gauge(cluster.urls[id], 'baton_consensus_applied_index'),
          behindBy: 3 * RAFT_SNAPSHOTS.snapshotInterval + RAFT_SNAPSHOTS.snapshotRetain + 8,
          ownSnapshotSlack: RAFT_SNAPSHOTS.snapshotInterval + 4,
          // A stream of its own per nudge: one metadata entry, and a larger snapshot to install.
          nudge: async (survivor) => {
            fillers += 1;
            await callJson(`${cluster.urls[survivor]}/v1/admin/streams`, {
              body: { stream: `filler-${fillers}`, node: survivor },
              token: cluster.token,
              timeoutMs: 2_000,
            });
          },
        },
        kills,
      ),
  });
  return {
    ...inner,
    check: async (ctx) => [...(await inner.check(ctx)), ...kills.problems],
    summaryLines: (ctx, windows) => [
      ...(inner.summaryLines?.(ctx, windows) ?? []),
      ...aimedKillLines(kills),
    ],
  };
}
