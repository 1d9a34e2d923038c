import { join } from 'node:path';
import { callJson } from '../http-json.js';
import type { Workload } from '../run-nemesis.js';
import type { AuthorityCluster } from '../authority/authority-cluster.js';
import { authorityWorkload } from '../authority/authority-workload.js';
import { aimedKillLines, durableKillFaults, type AimedKills } from '../durable-kill-faults.js';
import { raftSnapshotWindow, storePutWindow } from '../durable-windows.js';
import { gauge } from '../stream/stream-cluster.js';
import { checkFeedsKeptAcknowledged, readFeed, type FeedReading } from './feed-durability.js';
import { RAFT_SNAPSHOTS } from './stream-durable-workload.js';

/** The aimed kills of the authority variant, by the fault kind the nemesis draws. */
export const AUTHORITY_DURABLE_KINDS = {
  compaction: 'kill-in-raft-compaction',
  put: 'kill-in-audit-put',
  install: 'kill-in-snapshot-install',
} as const;

/**
 * The authority workload (writers at each authority's home, operator transfers and cancels,
 * the same checks) with kills aimed at a member's durable paths instead of the usual faults: a
 * Raft snapshot of its own being written and the log compacted onto it (a snapshot every few
 * entries), a put into its fs audit store (each committed move is sealed in every member's
 * audit), and a Raft snapshot installed from the leader by a member left behind while it was
 * down. Checked besides: no member's feed lost or changed a write it acknowledged (see
 * feed-durability.ts). `kills` counts where the kills landed; a member that does not serve
 * again after one is a problem of the run.
 */
export function authorityDurableWorkload(kills: AimedKills): Workload {
  let cluster: AuthorityCluster | undefined;
  const incarnations = new Map<string, string>();
  let fillers = 0;
  const inner = authorityWorkload({
    name: 'authority-durable',
    testFile: 'dist/test/nemesis/authority-durable.test.js',
    raft: RAFT_SNAPSHOTS,
    faults: (c) => {
      cluster = c;
      const control = (id: string) => c.nodes.find((n) => n.id === id)!.control;
      return durableKillFaults(
        c,
        [
          {
            kind: AUTHORITY_DURABLE_KINDS.compaction,
            windowOf: (m) =>
              raftSnapshotWindow('a Raft snapshot and log compaction', join(m.dir, 'raft')),
          },
          {
            kind: AUTHORITY_DURABLE_KINDS.put,
            windowOf: (m) =>
              storePutWindow(
                'a put into the fs audit store',
                join(m.dir, 'audit', 'audit'),
                m.process,
              ),
          },
        ],
        {
          kind: AUTHORITY_DURABLE_KINDS.install,
          windowOf: (m, above) =>
            raftSnapshotWindow('a Raft snapshot install', join(m.dir, 'raft'), above),
          appliedIndex: (id) => gauge(control(id), 'baton_consensus_applied_index', c.token),
          behindBy: 3 * RAFT_SNAPSHOTS.snapshotInterval + RAFT_SNAPSHOTS.snapshotRetain + 8,
          ownSnapshotSlack: RAFT_SNAPSHOTS.snapshotInterval + 4,
          // An authority of its own per nudge, placed by a raw move: one metadata entry.
          nudge: async (survivor) => {
            fillers += 1;
            const home = c.nodes.find((n) => n.id === survivor)!.datacenter;
            await callJson(`${control(survivor)}/availability/v1/commands`, {
              body: { type: 'transfer_authority', authority: `filler-${fillers}`, target: home },
              token: c.token,
              headers: { 'idempotency-key': `filler-${fillers}` },
              timeoutMs: 2_000,
            });
          },
        },
        kills,
      );
    },
  });
  return {
    ...inner,
    async start(ctx) {
      const c = await inner.start(ctx);
      for (const node of cluster!.nodes)
        incarnations.set(node.id, (await readFeed(cluster!, node)).incarnation);
      return c;
    },
    async check(ctx) {
      const problems = await inner.check(ctx);
      const feeds = new Map<string, FeedReading>();
      for (const node of cluster!.nodes) {
        try {
          feeds.set(node.id, await readFeed(cluster!, node));
        } catch (error) {
          problems.push((error as Error).message);
        }
      }
      problems.push(...checkFeedsKeptAcknowledged(ctx.log, incarnations, feeds), ...kills.problems);
      return problems;
    },
    summaryLines: (ctx, windows) => [
      ...(inner.summaryLines?.(ctx, windows) ?? []),
      ...aimedKillLines(kills),
    ],
  };
}
