import { BatonError } from './errors.js';
import { token } from './token.js';
export { StoreUnavailableError } from './errors.js';

/**
 * The sealed record of one committed authority transfer, field for field as an operator sees it
 * (seed 003, "The audit record"). `id` is the transfer identity (its Idempotency-Key);
 * `commit_term`/`commit_index` are the Raft position that decided the move; `epoch` is the
 * fencing epoch the move minted.
 */
export interface AuditRecord {
  id: string;
  authority: string;
  source: string;
  target: string;
  actor: string;
  reason: string;
  barrier: number;
  epoch: number;
  commit_term: number;
  commit_index: number;
  /**
   * The record's place among the records one log entry sealed on the same trail (0 when it is
   * the only one, and when absent): a drain's entry seals the drain and each transfer it started.
   * A record's identity is (authority, commit_index, seq).
   */
  seq?: number;
  /** What changed: `planned_transfer`, `stream_created`, `transfer_proposed`, `node_liveness`... */
  kind?: string;
  /** What the change is about: `stream`, `node`, `authority` or `cluster`, and its id. */
  subject_type?: string;
  subject?: string;
  /** The epoch before the change (`epoch` is the one after it). */
  epoch_before?: number;
  /** The id of the record of the drain, rebalance, failover or liveness verdict this one belongs to. */
  cause?: string;
  /** What an automatic decision saw (a node's silence, the thresholds it crossed). */
  evidence?: string;
  /** Wall-clock milliseconds, as the member that proposed the change read its clock. */
  time?: number;
  /** The hash of the previous record of the trail ('' for the first): the chain a verify walks. */
  prev_hash?: string;
  /** This record's hash (auditRecordHash): what the next record's prev_hash names. */
  hash?: string;
}

/**
 * A member's durable audit trail. `authority` names the record's trail: an authority (the
 * authority variant keeps one trail per authority) or a cluster's trail (the stream variant keeps
 * one). Identity is `(authority, commit_index, seq)`: writing the same
 * record again changes nothing and succeeds, which is what lets a projection be retried after
 * a crash. A different record under an existing identity is refused with AuditConflictError,
 * because a sealed record never changes. Any failure to read or write raises
 * StoreUnavailableError (the API answers 503 rather than guess).
 */
export interface AuditStore {
  /** Stores the record; `created` is false when the identical record was already there. */
  put(record: AuditRecord): Promise<{ created: boolean }>;
  /** The record with this transfer id, if any. */
  byId(id: string): Promise<AuditRecord | undefined>;
  /** The record of the authority's most recent transfer (highest commit_index). */
  latest(authority: string): Promise<AuditRecord | undefined>;
  /**
   * The trail's records, newest first (descending commit_index, then seq), at most `limit`
   * (default 100); with `before` (and `beforeSeq`), only those whose position is below it, so a
   * caller pages through a history of any length by passing the last position it was given.
   */
  list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]>;
}

export interface AuditListOptions {
  limit?: number;
  /** Only records whose position (commit_index, seq) is below (before, beforeSeq ?? 0). */
  before?: number;
  beforeSeq?: number;
}

/** How many records a list call returns when it does not say. */
export const DEFAULT_AUDIT_LIST_LIMIT = 100;

/**
 * A list call's options as every store reads them: the default limit, or the caller's positive
 * integer; `before` a non-negative integer or absent. Throws RangeError naming the store.
 */
export function auditListOptions(
  options: AuditListOptions | undefined,
  store: string,
): { limit: number; before: number; beforeSeq: number } {
  const limit = options?.limit ?? DEFAULT_AUDIT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`${store} list: limit must be a positive integer, got ${String(limit)}`);
  const before = options?.before ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(before) || before < 0) throw new RangeError(`${store} list: before must be a non-negative integer, got ${String(before)}`);
  const beforeSeq = options?.beforeSeq ?? 0;
  if (!Number.isSafeInteger(beforeSeq) || beforeSeq < 0) throw new RangeError(`${store} list: beforeSeq must be a non-negative integer, got ${String(beforeSeq)}`);
  return { limit, before, beforeSeq };
}

/** The record's seq, 0 when it has none. */
export function seqOf(record: Pick<AuditRecord, 'seq'>): number {
  return record.seq ?? 0;
}

/** Orders records newest first: descending commit_index, then descending seq. */
export function newestFirst(a: AuditRecord, b: AuditRecord): number {
  return b.commit_index - a.commit_index || seqOf(b) - seqOf(a);
}

/** Whether the record's position lies below the list cursor (before, beforeSeq). */
export function isBeforeCursor(record: AuditRecord, cursor: { before: number; beforeSeq: number }): boolean {
  return record.commit_index < cursor.before || (record.commit_index === cursor.before && seqOf(record) < cursor.beforeSeq);
}

export const AUDIT_STORE = token<AuditStore>('AuditStore');

/** A different record already holds this (authority, commit_index), or this id. */
export class AuditConflictError extends BatonError {
  constructor(readonly record: AuditRecord, why: string) {
    super(
      'audit_conflict',
      `audit record ${record.id} (${record.authority} @ ${record.commit_index}) conflicts with a stored one: ${why}`,
    );
  }
}

/** The record is malformed (a field of the wrong type, a negative index): nothing was stored. */
export class InvalidAuditRecordError extends BatonError {
  constructor(readonly problems: readonly string[]) {
    super('invalid_audit_record', `not a valid audit record: ${problems.join('; ')}`);
  }
}

const TEXT_FIELDS = ['id', 'authority', 'source', 'target', 'actor', 'reason'] as const;
const COUNT_FIELDS = ['barrier', 'epoch', 'commit_term', 'commit_index'] as const;
const OPTIONAL_TEXT_FIELDS = ['kind', 'subject_type', 'subject', 'cause', 'evidence', 'prev_hash', 'hash'] as const;
const OPTIONAL_COUNT_FIELDS = ['seq', 'epoch_before', 'time'] as const;

/** Every field of the contract, in the one order stores write them (equal records, equal text). */
export const AUDIT_RECORD_FIELDS = [
  ...TEXT_FIELDS,
  ...COUNT_FIELDS,
  ...OPTIONAL_COUNT_FIELDS,
  ...OPTIONAL_TEXT_FIELDS,
] as const satisfies readonly (keyof AuditRecord)[];

/**
 * The record's contract fields only, copied in the fixed order, optional ones left out when
 * absent: what a store keeps (a field the contract does not know is dropped) and hands out (so
 * no caller can change a stored record afterwards).
 */
export function copyAuditRecord(record: AuditRecord): AuditRecord {
  const copy: Record<string, unknown> = {};
  for (const field of AUDIT_RECORD_FIELDS) {
    if (record[field] !== undefined) copy[field] = record[field];
  }
  return copy as unknown as AuditRecord;
}

/**
 * Every store refuses the same records: text fields are strings, counts are non-negative safe
 * integers (commit_index orders an authority's history). Throws InvalidAuditRecordError.
 */
export function checkAuditRecord(record: AuditRecord): void {
  const problems: string[] = [];
  if (record === null || typeof record !== 'object') {
    throw new InvalidAuditRecordError([`expected an object, got ${record === null ? 'null' : typeof record}`]);
  }
  for (const field of TEXT_FIELDS) {
    if (typeof record[field] !== 'string') problems.push(`${field} must be a string, got ${typeof record[field]}`);
  }
  for (const field of COUNT_FIELDS) {
    const value = record[field];
    if (!Number.isSafeInteger(value) || value < 0) {
      problems.push(`${field} must be a non-negative integer, got ${String(value)}`);
    }
  }
  for (const field of OPTIONAL_TEXT_FIELDS) {
    const value = record[field];
    if (value !== undefined && typeof value !== 'string') problems.push(`${field} must be a string when present, got ${typeof value}`);
  }
  for (const field of OPTIONAL_COUNT_FIELDS) {
    const value = record[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      problems.push(`${field} must be a non-negative integer when present, got ${String(value)}`);
    }
  }
  if (problems.length > 0) throw new InvalidAuditRecordError(problems);
}

/** The names of the fields in which two records differ (empty when they are identical). */
export function differingAuditFields(a: AuditRecord, b: AuditRecord): string[] {
  return AUDIT_RECORD_FIELDS.filter((field) => a[field] !== b[field]);
}
