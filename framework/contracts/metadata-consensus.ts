import { BatonError } from './errors.js';
import type { MemberId } from './peer-transport.js';
import { token } from './token.js';

/** Where an entry sits in the replicated log. */
export interface LogPosition {
  term: number;
  index: number;
}

/** What `apply` may know besides the command: where it sits and who voted at that point. */
export interface ApplyContext {
  position: LogPosition;
  /** The voting members in force at this log index, sorted. */
  voters: readonly MemberId[];
}

/**
 * The deterministic state machine a variant replicates. `apply` mutates `state` in place and
 * returns the command's result; it must be a function of (state, command, ctx) alone: no I/O,
 * no clock, no randomness, so every member reaches the same state from the same log.
 * A rejected command is a *result* (e.g. `{ok: false, reason}`), never a throw: a throw from
 * apply is a bug and stops the member rather than let replicas diverge.
 *
 * Commands, results and snapshots must be JSON-serialisable: they cross the network and disks.
 */
export interface StateMachine<S, C, R> {
  initial(): S;
  apply(state: S, command: C, ctx: ApplyContext): R;
  /**
   * Called when a membership change is applied (a voter added or removed), so a state machine
   * that keeps per-voter obligations (seed 003: audits "until every voter present at commit has
   * stored it or left the membership") can release them. Same purity rules as `apply`.
   */
  membershipChanged?(state: S, ctx: ApplyContext): void;
  /** A JSON-serialisable deep copy of the state. */
  snapshot(state: S): unknown;
  restore(snapshot: unknown): S;
  /**
   * Optional, for large states: a frozen view of `state` taken in O(1) (or a few milliseconds),
   * whose pieces are read later, a few at a time, while `apply` goes on changing the live state
   * (a persistent structure's copy-on-write clone). Without it the consensus takes
   * `snapshot(state)` whole, which costs O(state) on the member's event loop.
   */
  capture?(state: S): StateCapture;
  /**
   * Optional, with `capture`: rebuilds a state from the pieces of a capture, one at a time, so
   * the member can serve between them. Without it the consensus calls `restore` with the one
   * piece a state machine without `capture` produces.
   */
  assemble?(): StateAssembly<S>;
}

/** A frozen view of a state, read as a sequence of pieces. */
export interface StateCapture {
  /**
   * The pieces in order; each JSON-serialisable and small (about a thousand records, at most
   * 256 KiB of JSON), because each travels as one message. Every call starts from the first.
   * The pieces are shared with stored snapshots: nobody may change them.
   */
  pieces(): Iterable<unknown>;
}

/** A state being rebuilt from the pieces of a capture, in their order. */
export interface StateAssembly<S> {
  /** Takes one piece (bounded work: indexes are rebuilt here piece by piece). Must not change it. */
  add(piece: unknown): void;
  /** The state, once every piece was added. */
  finish(): S;
}

/** The token under which a host registers its variant's state machine for the consensus plugin. */
export const STATE_MACHINE = token<StateMachine<any, any, any>>('StateMachine');

/** The committed decision for one proposal. */
export interface Receipt<R> {
  /** The log position that decided it (the original one when replayed). */
  position: LogPosition;
  result: R;
  /** True when this is the earlier decision for the same idempotency key, not a new append. */
  replayed: boolean;
}

export interface ProposeOptions {
  /**
   * Makes the proposal idempotent: the first commit under a key is the decision, and every
   * later proposal with the same key and the same command returns that decision (even through
   * another leader, even after a snapshot). The same key with a different command is refused
   * with NotAppendedError('key_reused'). "The same command" leaves out a top-level `observed`
   * member (what the proposing member saw when it proposed: its clock, its feeds): a retry
   * through another member is the same request, and replays the first decision.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Give up waiting after this long (implementation default otherwise). */
  timeoutMs?: number;
}

/** The local state as applied so far. Treat `state` as read-only. */
export interface AppliedView<S> {
  state: S;
  applied: LogPosition;
}

/** One applied entry, as passed to watchers. */
export interface AppliedEntry<C, R> {
  position: LogPosition;
  command: C;
  result: R;
}

export interface Leadership {
  self: MemberId;
  isLeader: boolean;
  /** The leader this member currently follows, if it knows one. */
  leader?: MemberId;
  term: number;
}

export interface Membership {
  /** The voting members in force at the latest applied index, sorted. */
  voters: MemberId[];
}

/**
 * One replicated state machine. Proposals work on any member (followers forward to the
 * leader). Failures say whether the command can have been appended, because callers decide
 * differently: NotAppendedError means it certainly was not (retry freely, or give up cleanly);
 * OutcomeUnknownError means it may have been (retry with the same idempotency key to learn the
 * decision).
 */
export interface MetadataConsensus<S, C, R> {
  propose(command: C, options?: ProposeOptions): Promise<Receipt<R>>;
  /** A linearizable view: includes every write committed before the call. */
  read(options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<AppliedView<S>>;
  /** The local applied view, without a round trip (may lag the leader). */
  view(): AppliedView<S>;
  /**
   * Calls `fn` after every command applied on this member, in log order. Returns the
   * unsubscribe. Membership changes and leader no-ops are not commands: they advance
   * `view().applied` without a call, so consecutive entries seen here may skip indexes.
   */
  watch(fn: (view: AppliedView<S>, entry: AppliedEntry<C, R>) => void): () => void;
  leadership(): Leadership;
  onLeadership(fn: (leadership: Leadership) => void): () => void;
  membership(): Membership;
  /**
   * Adds one voter (one change at a time); resolves once the change is committed. `address`
   * is where the new member's peers reach it, for a transport that learns addresses.
   */
  addVoter(member: MemberId, options?: { signal?: AbortSignal; address?: string }): Promise<void>;
  /**
   * Removes one voter; resolves once the change is committed. With `expectedVoters` the change
   * is a check-and-set: it is appended only if the voters in force (a change still pending
   * included) are exactly those, otherwise NotAppendedError('membership_changed'). A caller that
   * checked the removal against the voters it read (the quorum left, say) passes what it read,
   * so two removals checked at once cannot both land on a configuration neither checked.
   */
  removeVoter(member: MemberId, options?: { signal?: AbortSignal; expectedVoters?: readonly MemberId[] }): Promise<void>;
  /** Optional capability (`canListMembers`): the voters as the leader sees them. */
  members?(options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<MembershipDetails>;
  /** Optional capability (`canMoveLeader`): makes `member` the leader; resolves once this member sees it lead. */
  moveLeader?(member: MemberId, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<Leadership>;
  /** Optional capability (`canExportSnapshot`): the replicated state at an applied index after a linearizable read. */
  exportSnapshot?(options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<ConsensusSnapshot>;
  /** Why an optional capability is absent, in words an operator can act on (the admin API's 501 says it). */
  readonly capabilityGaps?: Partial<Record<OptionalConsensusCapability, string>>;
}

/** The optional operations of a MetadataConsensus an administrator may ask for. */
export type OptionalConsensusCapability = 'members' | 'moveLeader' | 'exportSnapshot';

/** One voter, as the member asked knows it (match and liveness only from a leader's view). */
export interface VoterDetails {
  id: MemberId;
  /** Where its peers reach it, when the transport knows. */
  address?: string;
  leader: boolean;
  /** The highest log index the leader knows this voter holds. */
  match?: number;
  /** The applied index, known for the member that answers. */
  applied?: number;
  /** Heard from by the leader within an election timeout; absent when no leader answered. */
  live?: boolean;
}

export interface MembershipDetails {
  term: number;
  leader?: MemberId;
  /** Who answered the details: the leader, or this member alone when no leader could be asked. */
  from: MemberId;
  voters: VoterDetails[];
}

/**
 * A consistent image of the replicated state: what the consensus stores as a snapshot
 * (`pieces`, JSON values in its own format) at log position `index`/`term`, with the voters
 * in force there. Enough to seed a fresh member's storage.
 */
export interface ConsensusSnapshot {
  /** The consensus implementation's snapshot format, so a restore refuses a foreign one. */
  format: string;
  index: number;
  term: number;
  voters: MemberId[];
  pieces: unknown[];
}

/** A consensus that has the optional capability K (what canListMembers and its like narrow to). */
export type WithCapability<K extends keyof MetadataConsensus<any, any, any>> = MetadataConsensus<any, any, any> &
  Required<Pick<MetadataConsensus<any, any, any>, K>>;

export function canListMembers(c: MetadataConsensus<any, any, any>): c is WithCapability<'members'> {
  return typeof c.members === 'function';
}
export function canMoveLeader(c: MetadataConsensus<any, any, any>): c is WithCapability<'moveLeader'> {
  return typeof c.moveLeader === 'function';
}
export function canExportSnapshot(c: MetadataConsensus<any, any, any>): c is WithCapability<'exportSnapshot'> {
  return typeof c.exportSnapshot === 'function';
}

export const METADATA_CONSENSUS = token<MetadataConsensus<any, any, any>>('MetadataConsensus');

export type NotAppendedReason =
  | 'key_reused'
  | 'queue_saturated'
  | 'no_leader'
  | 'membership_change_in_progress'
  /** The voters are no longer the ones the caller expected (removeVoter's `expectedVoters`). */
  | 'membership_changed'
  /** The caller's signal aborted before the proposal was handed to the log. */
  | 'aborted'
  /** The command cannot be logged as JSON by every member (nested too deep, not JSON at all). */
  | 'invalid_command'
  | 'stopped';

/** The command was certainly not appended to the log. Safe to retry or abandon. */
export class NotAppendedError extends BatonError {
  constructor(
    readonly reason: NotAppendedReason,
    detail: string,
  ) {
    super(`not_appended.${reason}`, `proposal was not appended (${reason}): ${detail}`);
  }
}

export type OutcomeUnknownReason = 'leadership_lost' | 'timeout' | 'aborted' | 'stopped';

/**
 * The command may have been appended and may yet commit. Retry with the same idempotency key
 * to learn the decision; never assume either outcome.
 */
export class OutcomeUnknownError extends BatonError {
  constructor(
    readonly reason: OutcomeUnknownReason,
    detail: string,
  ) {
    super(`outcome_unknown.${reason}`, `proposal outcome unknown (${reason}): ${detail}`);
  }
}

/** A linearizable read could not be served (no leader, no quorum in time). Nothing changed. */
export class ReadUnavailableError extends BatonError {
  constructor(detail: string) {
    super('read_unavailable', `linearizable read unavailable: ${detail}`);
  }
}

/** The named member did not become leader in time (behind, down, or leadership moved elsewhere). Nothing else changed. */
export class LeaderMoveFailedError extends BatonError {
  constructor(detail: string) {
    super('leader_move_failed', `leader move failed: ${detail}`);
  }
}
