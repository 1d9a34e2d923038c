import type { AuditRecord } from '../contracts/audit-store.js';
import type { MemberId } from '../contracts/peer-transport.js';

/** Where an authority lives: its home datacenter and the fencing epoch minted by its last move. */
export interface Ownership {
  home: string;
  epoch: number;
}

/**
 * A sealed audit record not yet stored by every voter present at its commit. `awaiting` holds
 * the voters that have not acknowledged their store write; the record leaves the replicated
 * state once it is empty (every voter stored it or left the membership).
 */
export interface PendingAudit {
  record: AuditRecord;
  awaiting: MemberId[];
}

/** The replicated ownership state. Plain JSON, so snapshots are deep copies of it. */
export interface OwnershipState {
  authorities: Record<string, Ownership>;
  /** Sealed records pending projection, by transfer id. */
  pending: Record<string, PendingAudit>;
}

/**
 * The unconditional move a failover commits (seed 003, "the raw transfer_authority command").
 * It also establishes an authority the state has never seen, at epoch 1. `expectedSource`, when
 * given, makes the move refuse if the authority's home changed meanwhile.
 */
export interface TransferAuthorityCommand {
  type: 'transfer_authority';
  authority: string;
  target: string;
  expectedSource?: string;
}

/**
 * The commit of a planned transfer: the request fields, sealed by the state machine with the
 * post-mutation epoch and the deciding log position.
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

export type OwnershipCommand = TransferAuthorityCommand | CommitPlannedTransferCommand | AckAuditCommand;

export type MoveRefusal = 'source_not_home' | 'unknown_authority' | 'already_home';

export type TransferAuthorityResult =
  | { ok: true; authority: string; source?: string; home: string; epoch: number }
  | { ok: false; reason: MoveRefusal; home?: string; epoch?: number };

export type CommitPlannedTransferResult =
  | { ok: true; record: AuditRecord }
  | { ok: false; reason: MoveRefusal; home?: string; epoch?: number };

/** `released`: records that left the state with this ack; `unknown`: ids not pending (already released). */
export type AckAuditResult = { ok: true; released: string[]; unknown: string[] };

export type OwnershipResult =
  | TransferAuthorityResult
  | CommitPlannedTransferResult
  | AckAuditResult
  | { ok: false; reason: 'unknown_command' };
