import { checkAuditRecord, copyAuditRecord, type AuditRecord } from '@baton/contracts';

/**
 * The record as stored: JSON with the fields in one fixed order. Equal records therefore encode
 * to equal strings, which is what lets the write script tell "the same record again" (nothing
 * to do) from "a different record at this identity" (a conflict) by comparing strings.
 * Fields the contract does not know are dropped rather than stored. A malformed record raises
 * the contract's InvalidAuditRecordError, as in every store.
 */
export function encodeAuditRecord(record: AuditRecord): string {
  checkAuditRecord(record);
  return JSON.stringify(pickFields(record));
}

/** The record a stored string holds, or undefined when the string is not one we wrote. */
export function decodeAuditRecord(text: string): AuditRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const record = pickFields(value as AuditRecord);
  try {
    checkAuditRecord(record);
  } catch {
    return undefined;
  }
  return record;
}

function pickFields(r: AuditRecord): AuditRecord {
  return copyAuditRecord(r);
}
