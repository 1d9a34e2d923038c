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
  audit: (authority: string, limit: number) =>
    `/availability/v1/authorities/${encodeURIComponent(authority)}/audit?limit=${limit}`,
  members: '/availability/v1/members',
};

/** The sealed audit record of a committed transfer (seed 003, "The audit record"). */
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

/** A transfer in flight, as GET /availability/v1/transfers/{authority} describes it. */
export interface TransferStatus {
  id: string;
  authority: string;
  source: string;
  target: string;
  actor: string;
  reason: string;
  state: string;
  barrier: number;
  frontier: number | null;
  last_reading_age_ms: number | null;
  age_ms: number;
  deadline_in_ms: number;
  outcome_unknown: boolean;
}

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
