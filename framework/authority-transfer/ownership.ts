import type { AuditRecord, MemberId } from '@baton/contracts';
import type { SortedTree, TrailChain } from '@baton/consensus';
import type { TransferRequest } from './transfer-plan.js';
import type { FailoverLoss } from './failover-loss.js';

/**
 * Where an authority lives: its home datacenter and the fencing epoch minted by its last move.
 * A planned move also names what the new home must hold before it acknowledges a write under
 * that epoch (`catchUp`).
 */
export interface Ownership {
  home: string;
  epoch: number;
  catchUp?: HomeCatchUpRequirement;
  /** The datacenters a planned transfer may move it to (absent: any); set_authority_placement. */
  allowedHomes?: string[];
  /** The home its operators would rather have; shown, and kept allowed. */
  preferredHome?: string;
}

/** An authority's placement fields, carried from one record of it to the next. */
export function placementOf(ownership: Ownership | undefined): Pick<Ownership, 'allowedHomes' | 'preferredHome'> {
  return {
    ...(ownership?.allowedHomes ? { allowedHomes: ownership.allowedHomes } : {}),
    ...(ownership?.preferredHome ? { preferredHome: ownership.preferredHome } : {}),
  };
}

/** One source member's final serial, in the incarnation of its feed the serial counts in. */
export interface FinalSerial {
  member: MemberId;
  incarnation: string;
  serial: number;
}

/**
 * What a planned commit leaves for the new home: the source members' final serials. The driver
 * saw the target reach them, but the target can lose its replica between that reading and the
 * commit's apply; so each member of the new home checks its own replica against them before it
 * acknowledges a write under the new epoch (see HomeCatchUp), and once it holds them says so
 * (`settle_catch_up`): from then on it checks no more, so a source feed that later starts a new
 * incarnation (its member lost its disk) cannot block the home's writes.
 */
export interface HomeCatchUpRequirement {
  /** Source members whose final serial was above 0. */
  finals: FinalSerial[];
  /** Members of the home that held every final once. */
  settled: MemberId[];
  /**
   * Every member of the home settled, as the roster of the member that settled last lists them:
   * the move leaves the index of unsettled moves (`unsettledByHome`).
   */
  done?: true;
}

/** A requirement some member of the home may still have to settle (what `unsettledByHome` lists). */
export function unsettled(ownership: Ownership | undefined): boolean {
  return ownership?.catchUp !== undefined && ownership.catchUp.done !== true;
}

/** At most this many members settle one requirement (a datacenter's members, with room to spare). */
export const MAX_SETTLED_MEMBERS = 64;

/**
 * A sealed audit record not yet stored by every voter present at its commit. `awaiting` holds
 * the voters that have not acknowledged their store write; the record leaves the replicated
 * state once it is empty (every voter stored it or left the membership).
 */
export interface PendingAudit {
  record: AuditRecord;
  awaiting: MemberId[];
}

/**
 * One source member's feed as a registered transfer counts it: the serial the target must
 * apply before the freeze (`barrier`, the member's acknowledged writes at registration) and,
 * once the authority is frozen, the member's final serial (`final`: nothing it acknowledged
 * for the authority under the old epoch lies past it).
 */
export interface SourceCursor {
  member: MemberId;
  incarnation: string;
  barrier: number;
  final?: number;
}

/**
 * A planned transfer registered in the replicated state: one per authority cluster-wide. The
 * member that took the request drives it (`driver`); every member sees it, refuses a second
 * transfer of the authority, and, while `frozen`, the source members acknowledge no write to it.
 */
export interface TransferIntent extends TransferRequest {
  driver: MemberId;
  /** One cursor per member of the source datacenter. */
  sources: SourceCursor[];
  /** Wall-clock ms (the driver's clock) after which any member may release it. */
  deadline: number;
  frozen: boolean;
  /**
   * How many times it was frozen: a final serial names the freeze it was taken after, so one
   * read after an earlier freeze (replayed, or late) never counts for a later one.
   */
  freezes: number;
  /** Wall-clock ms (the driver's clock) after which any member may lift the freeze. */
  thawBy?: number;
  /** Log index of the registration. */
  registered: number;
  /** A scheduled transfer: its driver reads the target and freezes nothing before this (its clock). */
  notBefore?: number;
}

/**
 * A registered transfer released without its commit: cancelled, timed out, expired, or dropped
 * by a failover's move. Kept in the replicated state (and its snapshots), bounded per authority
 * and in total, so every member, a restarted one included, refuses its key for another move
 * alike, and a repeated cancel answers 204 for the authority's latest one until a move commits.
 */
export interface AbandonedTransfer {
  id: string;
  authority: string;
  source: string;
  target: string;
  reason: string;
  why: ReleaseTransferCommand['why'] | 'failover';
  /** Log index of the release: the entry's key, and the order the bounds evict in. */
  released: number;
  /** A move of the authority committed after it: a repeated cancel answers for that move. */
  superseded?: true;
}

/**
 * The newest abandoned keys kept per authority (a key reissued for another move of the same
 * authority after four later ones were called off is no longer recognised) and in total: about
 * 300 bytes each as usually named (5 MiB at the bound), 4 KiB at most (a 1,024-character reason,
 * bounded names: 64 MiB). Constants, not options: every member must evict alike.
 */
export const ABANDONED_PER_AUTHORITY = 4;
export const ABANDONED_TOTAL = 16_384;

/**
 * The replicated ownership state. Keyed collections throughout, so any string (`constructor`,
 * `__proto__`) is an ordinary authority id. The primary collections are ordered copy-on-write
 * trees whose records are replaced on change, never mutated: a capture clones them in O(1) and
 * reads the frozen copy out in pieces later, while commands go on. The `by*` maps are indexes
 * kept by every command and rebuilt by `restore`/`assemble`; snapshots carry only the primaries.
 */
export interface OwnershipState {
  authorities: SortedTree<string, Ownership>;
  /** Sealed records pending projection, by record id (a planned transfer's key, or `<commit_index>-0`). */
  pending: SortedTree<string, PendingAudit>;
  /**
   * authority -> the head and anchors of its trail's hash chain: every record sealed for the
   * authority links to the one before, and the replicated state remembers where the chain ends,
   * so a store's copy rewritten from an edit onwards still disagrees with it.
   */
  chains: SortedTree<string, TrailChain>;
  /** Registered transfers, by authority. */
  transfers: SortedTree<string, TransferIntent>;
  /** Transfers released without their commit, by the log index of the release (AbandonedTransfer). */
  abandoned: SortedTree<number, AbandonedTransfer>;
  /**
   * Releases are filed in `abandoned` (and a called-off key refused at registration) from a
   * point of the log every member shares: from the start for a state begun this way, else from
   * the `track_abandoned_keys` entry a leader appends once. A member restored from a snapshot
   * taken before keys were tracked would otherwise know only the releases after its own
   * snapshot, and refuse registrations another member accepts.
   */
  abandonedTracked: boolean;
  /** authority -> ids of its pending records. */
  pendingByAuthority: Map<string, Set<string>>;
  /** source datacenter -> authorities with a registered transfer from it. */
  transfersBySource: Map<string, Set<string>>;
  /** target datacenter -> authorities with a registered transfer to it. */
  transfersByTarget: Map<string, Set<string>>;
  /** driving member -> authorities whose registered transfer it drives. */
  transfersByDriver: Map<string, Set<string>>;
  /** transfer id -> the authority it is registered for (one key names one transfer). */
  transfersById: Map<string, string>;
  /**
   * home datacenter -> authorities whose planned move there left a catch-up requirement not every
   * member of the home settled: what a member of that home looks over on start, instead of
   * scanning the authorities.
   */
  unsettledByHome: Map<string, Set<string>>;
  /** transfer id -> the release index of its abandoned entry. */
  abandonedById: Map<string, number>;
  /** authority -> release indexes of its abandoned entries, oldest first (at most ABANDONED_PER_AUTHORITY). */
  abandonedByAuthority: Map<string, number[]>;
}

/**
 * The unconditional move a failover commits (seed 003, "the raw transfer_authority command").
 * It also establishes an authority the state has never seen, at epoch 1. `expectedSource`, when
 * given, makes the move refuse if the authority's home changed meanwhile. A registered planned
 * transfer of the authority is released by it (the move it was waiting to make is moot). Every
 * move it makes seals a record (authority-audit-kinds.ts): who asked, why, and for a failover
 * what the proposing member saw the move lose.
 */
export interface TransferAuthorityCommand {
  type: 'transfer_authority';
  authority: string;
  target: string;
  expectedSource?: string;
  /** Move only while the authority is at this epoch (an operator's If-Match). */
  expectedEpoch?: number;
  /** The authenticated principal that asked (absent: UNATTRIBUTED_RAW_ACTOR). */
  actor?: string;
  reason?: string;
  /** A failover away from a Dead home (FailoverCommands): sealed as `failover_transfer`. */
  failover?: true;
  /** Left out of the idempotency fingerprint (commandFingerprint): what the proposer saw. */
  observed?: { at?: number; loss?: FailoverLoss };
}

/** Registers a planned transfer: refused while another one of the authority is registered. */
export interface RegisterTransferCommand extends TransferRequest {
  type: 'register_transfer';
  driver: MemberId;
  sources: { member: MemberId; incarnation: string; serial: number }[];
  deadline: number;
}

/** The target reached the barrier: the source members stop acknowledging writes to the authority. */
export interface FreezeTransferCommand {
  type: 'freeze_transfer';
  id: string;
  authority: string;
  thawBy: number;
}

/** A source member's final serial for a frozen authority, taken once it applied the freeze. */
export interface RecordFinalCommand {
  type: 'record_final';
  id: string;
  authority: string;
  member: MemberId;
  incarnation: string;
  serial: number;
  /** The freeze (TransferIntent.freezes) the serial was read after. */
  freeze: number;
}

/** Lifts the freeze; the finals become the barriers, so catching up restarts from them. */
export interface ThawTransferCommand {
  type: 'thaw_transfer';
  id: string;
  authority: string;
}

/** Unregisters a transfer (cancelled, timed out, expired); `id` absent: whichever is registered. */
export interface ReleaseTransferCommand {
  type: 'release_transfer';
  authority: string;
  id?: string;
  /**
   * Release only if this member drives the registration: the driver ending its own run never
   * releases the same key registered since by another member (a retry there).
   */
  driver?: string;
  why: 'cancelled' | 'timed_out' | 'expired' | 'abandoned';
}

/**
 * The commit of a planned transfer: allowed only for the registered transfer `id`, frozen, with
 * every source member's final serial recorded. The state machine seals the registered fields
 * with the post-mutation epoch, the deciding log position and, as the barrier, the highest
 * final serial. The request fields are carried to refuse a command that names another move.
 */
export interface CommitPlannedTransferCommand {
  type: 'commit_planned_transfer';
  id: string;
  authority: string;
  source: string;
  target: string;
  actor: string;
  reason: string;
  barrier: number;
  /** Left out of the idempotency fingerprint: the driver's clock at the commit, for the record's time. */
  observed?: { at?: number };
}

/** A member of the authority's home holds every final serial of the move that made it home. */
export interface SettleCatchUpCommand {
  type: 'settle_catch_up';
  authority: string;
  /** The epoch the move minted: a settle of an earlier move changes nothing. */
  epoch: number;
  member: MemberId;
  /**
   * The home's members as the settling member's roster lists them (at most MAX_SETTLED_MEMBERS):
   * once every one of them settled, the move leaves the index of unsettled moves.
   */
  homeMembers?: MemberId[];
}

/**
 * A member's acknowledgement that its durable audit store holds the sealed records `ids`. One
 * command carries a batch, so projection costs one consensus entry per member per batch rather
 * than one per record.
 */
export interface AckAuditCommand {
  type: 'ack_audit';
  ids: string[];
  member: MemberId;
}

/** From this entry on, releases are filed as abandoned keys (see OwnershipState.abandonedTracked). */
export interface TrackAbandonedKeysCommand {
  type: 'track_abandoned_keys';
}

export type TransferLifecycleCommand =
  | RegisterTransferCommand
  | FreezeTransferCommand
  | RecordFinalCommand
  | ThawTransferCommand
  | ReleaseTransferCommand;

/** Sets where planned transfers of an authority may go and where it would rather live (null clears). */
export interface SetAuthorityPlacementCommand {
  type: 'set_authority_placement';
  authority: string;
  allowedHomes: string[] | null;
  preferredHome: string | null;
}

export type SetAuthorityPlacementResult =
  | { ok: true; authority: string; home: string; epoch: number; allowedHomes: string[] | null; preferredHome: string | null }
  | { ok: false; reason: 'unknown_authority' | 'invalid_placement' };

export type OwnershipCommand =
  | TrackAbandonedKeysCommand
  | SetAuthorityPlacementCommand
  | TransferAuthorityCommand
  | CommitPlannedTransferCommand
  | AckAuditCommand
  | SettleCatchUpCommand
  | TransferLifecycleCommand;

/** `precondition_failed`: the request's expected epoch is not the authority's (epoch-precondition.ts). */
export type MoveRefusal = 'source_not_home' | 'unknown_authority' | 'already_home' | 'precondition_failed' | 'target_not_allowed';

export type TransferAuthorityResult =
  | { ok: true; authority: string; source?: string; home: string; epoch: number; record: AuditRecord }
  | { ok: false; reason: MoveRefusal; home?: string; epoch?: number };

export type CommitPlannedTransferResult =
  | { ok: true; record: AuditRecord }
  | { ok: false; reason: MoveRefusal | 'not_registered' | 'not_frozen'; home?: string; epoch?: number };

export type RegisterTransferResult =
  | { ok: true; intent: TransferIntent; existing: boolean }
  | { ok: false; reason: 'transfer_in_progress'; running: string }
  | { ok: false; reason: 'key_names_another_transfer'; running: TransferIntent }
  /** The key was registered for another move, which was called off: one key names one transfer. */
  | { ok: false; reason: 'key_abandoned'; abandoned: AbandonedTransfer }
  | { ok: false; reason: 'committed'; record: AuditRecord }
  /** A new registration named no source position: no barrier, so nothing is registered. */
  | { ok: false; reason: 'barrier_unread' }
  | { ok: false; reason: MoveRefusal; home?: string; epoch?: number };

/** Freeze, final, thaw and release: the intent after the change, or why it did not apply. */
export type TransferLifecycleResult =
  | { ok: true; intent: TransferIntent }
  | { ok: false; reason: 'not_registered' | 'not_frozen' | 'not_a_source' };

export type SettleCatchUpResult =
  | { ok: true; settled: MemberId[]; done: boolean }
  | { ok: false; reason: 'unknown_authority' | 'stale_epoch' };

/** `released`: records that left the state with this ack; `unknown`: ids not pending (already released). */
export type AckAuditResult = { ok: true; released: string[]; unknown: string[] };

export type OwnershipResult =
  | TransferAuthorityResult
  | CommitPlannedTransferResult
  | RegisterTransferResult
  | TransferLifecycleResult
  | AckAuditResult
  | SettleCatchUpResult
  | SetAuthorityPlacementResult
  | { ok: true; tracked: true }
  | { ok: false; reason: 'unknown_command' };

/** The record's barrier: the highest final serial of the source members (their only one, usually). */
export function finalBarrier(intent: TransferIntent): number {
  let barrier = 0;
  for (const cursor of intent.sources) barrier = Math.max(barrier, cursor.final ?? cursor.barrier);
  return barrier;
}

/** What the new home must hold after the commit of `intent` (undefined: nothing was written). */
export function catchUpAfter(intent: TransferIntent): HomeCatchUpRequirement | undefined {
  const finals: FinalSerial[] = [];
  for (const cursor of intent.sources) {
    const serial = cursor.final ?? cursor.barrier;
    if (serial > 0) finals.push({ member: cursor.member, incarnation: cursor.incarnation, serial });
  }
  return finals.length > 0 ? { finals, settled: [] } : undefined;
}

/** Every source member recorded its final serial. */
export function finalsComplete(intent: TransferIntent): boolean {
  return intent.frozen && intent.sources.every((cursor) => cursor.final !== undefined);
}
