import type { MemberId } from '@baton/contracts';

/**
 * "Nobody": no vote cast, no leader known.
 *
 * @internal
 */
export const NONE: MemberId = '';

/**
 * One log entry. `normal` entries carry the application's data (null for the no-op a new
 * leader appends); `conf` entries carry one membership change.
 */
export interface Entry {
  term: number;
  index: number;
  type: 'normal' | 'conf';
  data: unknown;
}

/**
 * One voter added or removed. `voters` is the full voter set once the change applies: a member
 * that joins late, or restores a snapshot, learns the whole configuration from one entry.
 */
export interface ConfChange {
  type: 'add' | 'remove';
  member: MemberId;
  voters: MemberId[];
}

/** What must be on disk before any message of the same Ready leaves the node. */
export interface HardState {
  term: number;
  vote: MemberId;
  commit: number;
  /**
   * Set when a repair dropped part of this member's log (`baton repair raft`): it may have
   * acknowledged entries up to this index that it no longer holds, and a vote from it could
   * then elect a leader without an entry a majority had committed. Until a leader's log has
   * matched its own up to here, it neither votes nor campaigns; then the field is cleared.
   */
  catchUpTo?: number;
}

export interface SnapshotMeta {
  index: number;
  term: number;
  /** The voters in force at `index`. */
  voters: MemberId[];
}

export interface Snapshot {
  meta: SnapshotMeta;
  data: unknown;
}

/** @internal */
export type Role = 'follower' | 'pre-candidate' | 'candidate' | 'leader';

/** @internal */
export interface SoftState {
  lead: MemberId;
  role: Role;
}

export type MessageType =
  | 'app'
  | 'app-resp'
  | 'heartbeat'
  | 'heartbeat-resp'
  | 'vote'
  | 'vote-resp'
  | 'pre-vote'
  | 'pre-vote-resp'
  | 'snap'
  | 'timeout-now'
  | 'read-index'
  | 'read-index-resp';

/**
 * A message between cores. Fields are used per type, as in etcd's raftpb.Message:
 * - app: index/logTerm locate the entry preceding `entries`; commit is the leader's commit.
 * - app-resp: index is the follower's last matching index, or on reject the rejected index with
 *   rejectHint/logTerm pointing at where the leader should probe next.
 * - heartbeat(-resp): commit (capped at the follower's match), readSeq for ReadIndex quorums. A
 *   heartbeat-resp with `reject` comes from a follower whose log was repaired and lost entries it
 *   had acknowledged: `commit` is what it surely holds, `index` where its log ends.
 * - (pre-)vote: index/logTerm describe the candidate's last entry; context "transfer" marks a
 *   campaign started by TimeoutNow, which bypasses the leader lease.
 * - read-index(-resp): context identifies the read; index is the read's commit index.
 */
export interface Message {
  type: MessageType;
  from: MemberId;
  to: MemberId;
  term: number;
  index?: number;
  logTerm?: number;
  entries?: Entry[];
  commit?: number;
  reject?: boolean;
  rejectHint?: number;
  snapshot?: Snapshot;
  readSeq?: number;
  context?: string;
}

/**
 * A linearizable read became servable: once applied >= index, local state includes it.
 *
 * @internal
 */
export interface ReadState {
  index: number;
  context: string;
}

/**
 * The work a core hands to its driver. The driver must, in order: persist `snapshot`, `entries`
 * and `hardState` (synced), then send `messages`, then apply `committedEntries`, then call
 * `advance()`. Messages are never sent before the state they depend on is durable; when
 * `messagesFirst` is set, they depend on nothing in this Ready and may be sent before (or while)
 * it is persisted.
 *
 * @internal
 */
export interface Ready {
  /**
   * A leader's Ready that changes neither term nor vote nor installs a snapshot: its messages
   * (appends, heartbeats, read answers) may leave before its own entries are durable, as etcd
   * sends a leader's appends in parallel with its fsync. Safe because the leader counts its own
   * log towards a quorum only once `advance()` reports it persisted, and no message it sends
   * claims its own log is durable.
   */
  messagesFirst?: boolean;
  softState?: SoftState;
  hardState?: HardState;
  snapshot?: Snapshot;
  entries: Entry[];
  committedEntries: Entry[];
  messages: Message[];
  readStates: ReadState[];
}

export type ProposeRefusal =
  'not_leader' | 'transferring' | 'conf_change_pending' | 'invalid_conf_change';

export type ProposeOutcome =
  { ok: true; index: number; term: number } | { ok: false; reason: ProposeRefusal; detail: string };
