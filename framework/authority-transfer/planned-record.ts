import type { AuditRecord } from '@baton/contracts';
import type { OwnershipState } from './ownership.js';

/**
 * A planned transfer's record is found by its key; a raw move's record id (`<commit_index>-0`)
 * names no transfer, even when an operator chose a key spelt so. Whatever looks a transfer up by
 * its key, or an authority's last committed transfer, reads only planned records through these.
 */

/** Records sealed before kinds existed are planned transfers. */
export function isPlannedRecord(record: AuditRecord | undefined): record is AuditRecord {
  return record !== undefined && (record.kind ?? 'planned_transfer') === 'planned_transfer';
}

/** The pending record of planned transfer `id`, if it is one. */
export function pendingPlanned(state: OwnershipState, id: string): AuditRecord | undefined {
  const record = state.pending.get(id)?.record;
  return isPlannedRecord(record) ? record : undefined;
}

/** `record` if it is a planned transfer's (what a lookup by key in an audit store may find). */
export function plannedOnly(record: AuditRecord | undefined): AuditRecord | undefined {
  return isPlannedRecord(record) ? record : undefined;
}
