import { z } from 'zod';
import type { AuditRecord } from '../../framework/contracts/audit-store.js';
import { BatonError } from '../../framework/contracts/errors.js';

const position = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const auditRecordSchema = z.object({
  id: z.string().min(1),
  authority: z.string().min(1),
  source: z.string(),
  target: z.string(),
  actor: z.string(),
  reason: z.string(),
  barrier: position,
  epoch: position,
  commit_term: position,
  commit_index: position,
});

/** A record that cannot be stored: a missing field, a negative or fractional position... */
export class InvalidAuditRecordError extends BatonError {
  constructor(readonly issues: string) {
    super('invalid_audit_record', `the audit record is not valid, fix these fields: ${issues}`);
  }
}

/**
 * The record as stored: JSON with the fields in one fixed order. Equal records therefore encode
 * to equal strings, which is what lets the write script tell "the same record again" (nothing
 * to do) from "a different record at this identity" (a conflict) by comparing strings.
 * Fields the contract does not know are dropped rather than stored.
 */
export function encodeAuditRecord(record: AuditRecord): string {
  const parsed = auditRecordSchema.safeParse(record);
  if (!parsed.success) {
    throw new InvalidAuditRecordError(
      parsed.error.issues
        .map((issue) => `${issue.path.join('.') || 'record'}: ${issue.message}`)
        .join('; '),
    );
  }
  const r = parsed.data;
  return JSON.stringify({
    id: r.id,
    authority: r.authority,
    source: r.source,
    target: r.target,
    actor: r.actor,
    reason: r.reason,
    barrier: r.barrier,
    epoch: r.epoch,
    commit_term: r.commit_term,
    commit_index: r.commit_index,
  });
}

/** The record a stored string holds, or undefined when the string is not one we wrote. */
export function decodeAuditRecord(text: string): AuditRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = auditRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
