import type { AuditRecord } from '@baton/contracts';
import type { ConnectionTarget } from '../connection.js';

/** The authority commands talk to an authority node's control listener (mode ha). */
export const AUTHORITY_CONTROL: ConnectionTarget = {
  listener: 'authority control listener',
  defaultUrl: 'http://127.0.0.1:7601',
};

/** The control listener's paths (seed 003), with the authority escaped as one path segment. */
export const controlPaths = {
  transfers: '/availability/v1/transfers',
  transfer: (authority: string) => `/availability/v1/transfers/${encodeURIComponent(authority)}`,
  authority: (authority: string) => `/availability/v1/authorities/${encodeURIComponent(authority)}`,
  /** One page of authorities by id, after the cursor. */
  authorities: (after: string | undefined, limit: number) =>
    `/availability/v1/authorities?limit=${limit}${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`,
  /** One page of an authority's audit, newest first: records below commit index `before`. */
  audit: (authority: string, limit: number, before?: number) =>
    `/availability/v1/authorities/${encodeURIComponent(authority)}/audit?limit=${limit}${before === undefined ? '' : `&before=${before}`}`,
  members: '/availability/v1/members',
  /** The raw transfer_authority command: with no source it gives an authority its first home. */
  commands: '/availability/v1/commands',
};

/**
 * What the control listener answers: the sealed audit record (seed 003, "The audit record") and
 * a transfer in flight (GET /availability/v1/transfers/{authority}), typed once by the node.
 */
export type { AuditRecord } from '@baton/contracts';
export type { TransferStatus } from '@baton/authority-transfer';

/** The record as a few lines for a person. */
export function auditLines(record: AuditRecord): string[] {
  return [
    `  id        ${record.id}`,
    `  actor     ${record.actor}`,
    `  reason    ${record.reason}`,
    `  barrier   ${record.barrier}`,
    `  epoch     ${record.epoch}`,
    `  commit    term ${record.commit_term}, index ${record.commit_index}`,
  ];
}
