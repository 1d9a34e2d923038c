import type { AuditRecord } from '@baton/contracts';

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

/** Shared by every store through the contract, so all of them refuse the same records. */
export { checkAuditRecord, differingAuditFields as differingFields } from '@baton/contracts';
