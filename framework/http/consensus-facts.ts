import type { MetadataConsensus, MemberId } from '@baton/contracts';

/** What a member's consensus says of itself: its role, the leader it follows, its log positions. */
export interface ConsensusFacts {
  role: 'leader' | 'follower';
  /** The leader this member follows (itself when it leads), or null when it knows none. */
  leader: MemberId | null;
  term: number;
  /** Highest index known committed; null when the implementation does not report it. */
  commitIndex: number | null;
  /** Highest index applied to the state machine on this member. */
  appliedIndex: number;
}

/**
 * The facts every view of a cluster shows (`baton status`, /readyz, the dashboard, the
 * consensus gauges of /metrics), read in one place so they cannot disagree. Only the
 * contract is used, plus the commit index when the implementation reports one.
 */
export function consensusFactsOf(consensus: MetadataConsensus<unknown, unknown, unknown>): ConsensusFacts {
  const leadership = consensus.leadership();
  const leader = leadership.isLeader ? leadership.self : (leadership.leader ?? null);
  return {
    role: leadership.isLeader ? 'leader' : 'follower',
    leader: leader === '' ? null : leader,
    term: leadership.term,
    commitIndex: commitIndexOf(consensus),
    appliedIndex: consensus.view().applied.index,
  };
}

/**
 * The commit index, when the implementation reports one through a `status()` carrying
 * `commit` (the Raft does). The MetadataConsensus contract has no commit index, and it is
 * better left unknown than filled with the applied index under another name.
 */
function commitIndexOf(consensus: object): number | null {
  const status = (consensus as { status?: unknown }).status;
  if (typeof status !== 'function') return null;
  const commit = (status.call(consensus) as { commit?: unknown } | undefined)?.commit;
  return typeof commit === 'number' ? commit : null;
}
