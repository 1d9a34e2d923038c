import type Router from '@koa/router';
import {
  clusterStatusRouter,
  memberReportRouter,
  clusterStatus,
  LeaderLoss,
  gatherMemberStatuses,
  memberReport,
  type Readiness,
  type RecentTransfers,
  type ClusterStatus,
} from '@baton/cluster';
import type { ApiDocument } from '@baton/http';
import { ADMIN_SCOPE } from './admin-router.js';
import { livenessOf, type NodeLiveness, type StreamMetadata } from './model.js';
import { pendingTransfers } from './progress.js';
import type { StreamNode } from './stream-node.js';

/** The picture shows this many of the oldest pending transfers (the count says how many there are). */
const OLDEST_TRANSFERS_SHOWN = 100;

/** Where each stream node serves its own report, and the picture of the cluster. */
export const STREAM_MEMBER_REPORT_PATH = '/v1/admin/cluster/member';
export const STREAM_CLUSTER_PATH = '/v1/admin/cluster';

/**
 * A node's liveness as the metadata leader published it (the replicated record, the same on
 * every member); null for a voter that registered no stream node. `baton status`, the
 * dashboard (both from this picture) and /metrics (`baton_stream_node_liveness`) read it here.
 */
export function publishedLiveness(state: StreamMetadata, id: string): NodeLiveness | null {
  const record = state.node(id);
  return record ? livenessOf(record) : null;
}

/**
 * The stream variant's picture of its cluster: every voter and registered node, each asked for
 * its report at the address it registered; counts of nodes and streams; the pending transfers.
 * Read from the local view, not a linearizable read, so a node cut off from its quorum still
 * answers and shows what it knows.
 */
export function streamClusterStatus(
  node: StreamNode,
  readiness: Readiness,
  recent: RecentTransfers | undefined,
  authorization?: string,
  leaderLoss?: LeaderLoss,
): Promise<ClusterStatus> {
  const state = node.metadata();
  // The verdicts are the leader's: without one they are the last applied here, not current.
  const leaderlessSince = leaderLoss?.leaderlessSince ?? null;
  const ids = new Set([...node.consensus.membership().voters, ...[...state.nodes()].map((n) => n.id)]);
  ids.delete(node.self);
  const addressOf = (id: string) => state.node(id)?.address ?? null;
  const peers = [...ids].map((id) => ({ id, address: addressOf(id) }));
  const self = { id: node.self, address: addressOf(node.self), report: memberReport(node.self, node.consensus, readiness, recent) };
  return gatherMemberStatuses(self, peers, {
    clock: node.clock,
    reportPath: STREAM_MEMBER_REPORT_PATH,
    authorization,
    liveness: (id) => publishedLiveness(state, id),
  }).then((members) =>
    clusterStatus({
      variant: 'stream',
      servedBy: node.self,
      members,
      counts: { nodes: state.nodeCount, streams: state.streamCount },
      transfers: {
        count: state.transferCount,
        oldest: pendingTransfers(state, OLDEST_TRANSFERS_SHOWN) as unknown as Record<string, unknown>[],
      },
      livenessUnknown:
        leaderlessSince === null
          ? null
          : {
              since: leaderlessSince,
              detail: `${node.self} knows no leader, and liveness is the leader's verdict: each one shown is the last ${node.self} applied`,
            },
    }),
  );
}

/** The two cluster routes of a stream node, behind the admin scope. */
export function streamClusterRouters(node: StreamNode, readiness: Readiness, recent: RecentTransfers | undefined, document: ApiDocument): Router[] {
  const options = { scope: ADMIN_SCOPE, tags: ['cluster'] };
  const leaderLoss = new LeaderLoss(node.consensus, node.clock);
  return [
    memberReportRouter(STREAM_MEMBER_REPORT_PATH, () => memberReport(node.self, node.consensus, readiness, recent), document, options),
    clusterStatusRouter(
      STREAM_CLUSTER_PATH,
      (ctx) => streamClusterStatus(node, readiness, recent, ctx.get('Authorization') || undefined, leaderLoss),
      document,
      options,
    ),
  ];
}
