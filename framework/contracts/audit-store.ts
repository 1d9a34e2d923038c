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
}

/**
 * A member's durable audit trail. Identity is `(authority, commit_index)`: writing the same
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
   * The authority's records, newest first (descending commit_index), at most `limit` (default
   * 100); with `before`, only those whose commit_index is below it, so a caller pages through a
   * history of any length by passing the last commit_index it was given.
   */
  list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]>;
}

export interface AuditListOptions {
  limit?: number;
  before?: number;
}

/** How many records a list call returns when it does not say. */
export const DEFAULT_AUDIT_LIST_LIMIT = 100;

/**
 * A list call's options as every store reads them: the default limit, or the caller's positive
 * integer; `before` a non-negative integer or absent. Throws RangeError naming the store.
 */
export function auditListOptions(options: AuditListOptions | undefined, store: string): { limit: number; before: number } {
  const limit = options?.limit ?? DEFAULT_AUDIT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`${store} list: limit must be a positive integer, got ${String(limit)}`);
  const before = options?.before ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(before) || before < 0) throw new RangeError(`${store} list: before must be a non-negative integer, got ${String(before)}`);
  return { limit, before };
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
  if (problems.length > 0) throw new InvalidAuditRecordError(problems);
}

/** The names of the fields in which two records differ (empty when they are identical). */
export function differingAuditFields(a: AuditRecord, b: AuditRecord): string[] {
  return [...TEXT_FIELDS, ...COUNT_FIELDS].filter((field) => a[field] !== b[field]);
}
