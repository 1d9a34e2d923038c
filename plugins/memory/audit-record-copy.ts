import type { AuditRecord } from '../../framework/contracts/audit-store.js';

const STRING_FIELDS = ['id', 'authority', 'source', 'target', 'actor', 'reason'] as const;
const NUMBER_FIELDS = ['barrier', 'epoch', 'commit_term', 'commit_index'] as const;

/** The record's own fields only, copied, so no caller can change a stored record afterwards. */
export function copyAuditRecord(record: AuditRecord): AuditRecord {
  return {
    id: record.id,
    authority: record.authority,
    source: record.source,
    target: record.target,
    actor: record.actor,
    reason: record.reason,
    barrier: record.barrier,
    epoch: record.epoch,
    commit_term: record.commit_term,
    commit_index: record.commit_index,
  };
}

/**
 * Refuses a record a store could not order or compare: every text field a string, every
 * number a non-negative safe integer (commit_index orders an authority's history).
 */
export function checkAuditRecord(record: AuditRecord): void {
  for (const field of STRING_FIELDS) {
    if (typeof record?.[field] !== 'string') {
      throw new TypeError(`audit record field ${field} must be a string, got ${typeof record?.[field]}`);
    }
  }
  for (const field of NUMBER_FIELDS) {
    const value = record[field];
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new TypeError(`audit record field ${field} must be a non-negative integer, got ${String(value)}`);
    }
  }
}

/** The names of the fields in which two records differ (empty when they are identical). */
export function differingFields(a: AuditRecord, b: AuditRecord): string[] {
  return [...STRING_FIELDS, ...NUMBER_FIELDS].filter((field) => a[field] !== b[field]);
}
