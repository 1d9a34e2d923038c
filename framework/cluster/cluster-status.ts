import type { ClusterStatus, LivenessUnknown, MemberStatus } from './schemas.js';
import { MAX_TRANSFERS_SHOWN } from './schemas.js';

export interface ClusterFacts {
  variant: ClusterStatus['variant'];
  servedBy: string;
  members: MemberStatus[];
  counts: Record<string, number>;
  /** Every transfer in flight, oldest first; the picture lists the first ones. */
  transfers: { count: number; oldest: Iterable<Record<string, unknown>> };
  /** Where liveness is the leader's published verdict: since when the serving member knows no leader. */
  livenessUnknown?: LivenessUnknown;
}

/**
 * The picture: the members as gathered, the leader and term of the newest term any member
 * reports a leader in (a member cut off from the others may still name an old one), counts,
 * and the oldest transfers in flight.
 */
export function clusterStatus(facts: ClusterFacts): ClusterStatus {
  let leader: string | null = null;
  let term = 0;
  for (const { report } of facts.members) {
    if (!report) continue;
    if (report.term > term || (report.term === term && leader === null && report.leader !== null)) {
      term = report.term;
      leader = report.leader;
    }
  }
  const shown: Record<string, unknown>[] = [];
  for (const transfer of facts.transfers.oldest) {
    if (shown.length >= MAX_TRANSFERS_SHOWN) break;
    shown.push(transfer);
  }
  return {
    variant: facts.variant,
    servedBy: facts.servedBy,
    leader,
    term,
    members: facts.members,
    counts: facts.counts,
    transfersInFlight: { count: facts.transfers.count, shown },
    livenessUnknown: facts.livenessUnknown ?? null,
  };
}
