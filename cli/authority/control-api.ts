import type { AuditRecord } from '@baton/contracts';
import { authorityControlApi, cliCall } from '../api-client.js';
import type { Connection, ConnectionTarget } from '../connection.js';

/** The authority commands talk to an authority node's control listener (mode ha). */
export const AUTHORITY_CONTROL: ConnectionTarget = {
  listener: 'authority control listener',
  defaultUrl: 'http://127.0.0.1:7601',
};

/** Where an authority lives, as the member at `connection` has applied it (a 404 naming it when it has no home). */
export function homeAt(connection: Connection, authority: string): Promise<{ authority: string; home: string; epoch: number }> {
  return cliCall(authorityControlApi(connection).GET('/availability/v1/authorities/{authority}', { params: { path: { authority } } }));
}

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
