import type Router from '@koa/router';
import {
  clusterStatusRouter,
  memberReportRouter,
  clusterStatus,
  gatherMemberStatuses,
  memberReport,
  type Readiness,
  type RecentTransfers,
  type ClusterStatus,
} from '@baton/cluster';
import type { Clock } from '@baton/contracts';
import type { ApiDocument } from '@baton/http';
import type { OwnershipConsensus } from './audit-projection.js';
import { ADMIN_READ_SCOPE } from './control-router.js';
import type { HomeCatchUp } from './home-catch-up.js';
import type { MemberTracker } from './member-tracker.js';
import type { TransferDriver } from './transfer-driver.js';
import type { Roster } from './roster.js';

/** On the public server, where the roster says each member is reached; the picture is on the control listener. */
export const AUTHORITY_MEMBER_REPORT_PATH = '/availability/v1/cluster/member';
export const AUTHORITY_CLUSTER_PATH = '/availability/v1/cluster';

export interface AuthorityClusterDeps {
  self: string;
  roster: Roster;
  tracker: MemberTracker;
  consensus: OwnershipConsensus;
  engine: TransferDriver;
  readiness: Readiness;
  recent: RecentTransfers;
  clock: Clock;
  /** The homes this member is catching up on (what baton_homes_catching_up counts). */
  catchUp: Pick<HomeCatchUp, 'catchingUp' | 'shortfalls'>;
  /** This member's control listener, once it listens: what `baton status --url` takes. */
  controlAddress?: () => string | undefined;
}

/** How many transfers in flight the picture lists. */
const OLDEST_SHOWN = 100;

const report = (deps: AuthorityClusterDeps) =>
  memberReport(deps.self, deps.consensus, deps.readiness, deps.recent, () => ({ count: deps.catchUp.catchingUp, shown: deps.catchUp.shortfalls() }), deps.controlAddress);

/**
 * The authority variant's picture: every roster member asked for its report on its public
 * server, with the member tracker's Alive/Suspect/Dead beside it; the number of authorities
 * with a home; the transfers registered cluster-wide (the 100 oldest).
 */
export async function authorityClusterStatus(deps: AuthorityClusterDeps, authorization?: string): Promise<ClusterStatus> {
  const members = deps.roster.allMembers();
  const address = (id: string) => members.find((m) => m.id === id)?.publicUrl ?? null;
  const statuses = await gatherMemberStatuses(
    { id: deps.self, address: address(deps.self), report: report(deps) },
    members.filter((m) => m.id !== deps.self).map((m) => ({ id: m.id, address: m.publicUrl })),
    { clock: deps.clock, reportPath: AUTHORITY_MEMBER_REPORT_PATH, authorization, liveness: (id) => deps.tracker.state(id) },
  );
  // The transfers registered cluster-wide (replicated), oldest first: the map keeps registration
  // order, so the oldest are read off its head without sorting them all.
  const { state } = deps.consensus.view();
  const oldest = [];
  for (const intent of state.transfers.values()) {
    if (oldest.length >= OLDEST_SHOWN) break;
    const status = deps.engine.status(intent.authority);
    if (status) oldest.push(status);
  }
  return clusterStatus({
    variant: 'authority',
    servedBy: deps.self,
    members: statuses,
    counts: { authorities: state.authorities.size },
    transfers: { count: state.transfers.size, oldest: oldest as unknown as Record<string, unknown>[] },
  });
}

/** The member report for the public server. */
export function authorityMemberReportRouter(deps: AuthorityClusterDeps, document: ApiDocument): Router {
  return memberReportRouter(AUTHORITY_MEMBER_REPORT_PATH, () => report(deps), document, { scope: ADMIN_READ_SCOPE, tags: ['cluster'] });
}

/** The picture for the control listener. */
export function authorityClusterRouter(deps: AuthorityClusterDeps, document: ApiDocument): Router {
  return clusterStatusRouter(
    AUTHORITY_CLUSTER_PATH,
    (ctx) => authorityClusterStatus(deps, ctx.get('Authorization') || undefined),
    document,
    { scope: ADMIN_READ_SCOPE, tags: ['cluster'] },
  );
}
