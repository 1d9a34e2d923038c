import type { AuditRecord, MemberId } from '@baton/contracts';

/**
 * A sealed audit record not yet stored by every voter present at its commit. `awaiting` holds
 * the voters that have not acknowledged their store write; the record leaves the replicated
 * state once it is empty (every voter stored it or left the membership).
 */
export interface PendingAudit {
  record: AuditRecord;
  awaiting: MemberId[];
}

/** Where a state machine keeps its pending records (by id); records are replaced, never changed in place. */
export interface PendingAuditTable {
  get(id: string): PendingAudit | undefined;
  put(pending: PendingAudit): void;
  drop(id: string): void;
}

/** `released`: records that left the state with this ack; `unknown`: ids not pending (already released). */
export interface AckAuditResult {
  ok: true;
  released: string[];
  unknown: string[];
}

/**
 * Applies a member's acknowledgement that its durable store holds the records `ids` (a batch,
 * so projection costs one entry per member per batch). A repeated acknowledgement changes
 * nothing. Costs O(log n) per id, never a scan.
 */
export function acknowledgeAudits(table: PendingAuditTable, ids: unknown, member: MemberId): AckAuditResult {
  const released: string[] = [];
  const unknown: string[] = [];
  for (const id of Array.isArray(ids) ? ids : []) {
    const pending = typeof id === 'string' ? table.get(id) : undefined;
    if (!pending) {
      unknown.push(id as string);
      continue;
    }
    const awaiting = pending.awaiting.filter((m) => m !== member);
    if (awaiting.length === 0) {
      table.drop(id as string);
      released.push(id as string);
    } else if (awaiting.length !== pending.awaiting.length) {
      table.put({ record: pending.record, awaiting });
    }
  }
  return { ok: true, released, unknown };
}

/** Voters that left can no longer store anything: their obligations are released. */
export function releaseLeftVoters(table: PendingAuditTable, all: Iterable<PendingAudit>, voters: readonly MemberId[]): void {
  const present = new Set(voters);
  for (const pending of [...all]) {
    const awaiting = pending.awaiting.filter((member) => present.has(member));
    if (awaiting.length === 0) table.drop(pending.record.id);
    else if (awaiting.length !== pending.awaiting.length) table.put({ record: pending.record, awaiting });
  }
}
