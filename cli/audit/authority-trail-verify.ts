import type { AuditRecord } from '@baton/contracts';
import { MAX_AUDIT_PAGE } from '@baton/authority-transfer';
import { verifyAuditTrail } from '@baton/stream-transfer';
import { authorityControlApi, cliCall } from '../api-client.js';
import type { Connection } from '../connection.js';

/**
 * Verifies one authority's trail as an authority member's audit store holds it: the chain head
 * and anchors the replicated state keeps (read first, so every record they name is committed),
 * then the whole trail in pages, oldest first, through the same check the stream trail takes.
 */
export async function verifyAuthorityTrail(connection: Connection, authority: string) {
  const client = authorityControlApi(connection);
  const chain = await cliCall(client.GET('/availability/v1/audit/chain', { params: { query: { subject: authority } } }));
  const newestFirst: AuditRecord[] = [];
  let before: number | null = null;
  for (;;) {
    const query: { subject: string; limit: number; before?: number } = { subject: authority, limit: MAX_AUDIT_PAGE, ...(before === null ? {} : { before }) };
    const page = await cliCall(client.GET('/availability/v1/audit', { params: { query } }));
    newestFirst.push(...page.records.map(storedFields));
    if (page.next === null) break;
    before = page.next;
  }
  const verdict = verifyAuditTrail(newestFirst.reverse(), { anchors: chain.anchors, ...(chain.head ? { head: chain.head } : {}) });
  return { trail: chain.authority, head: chain.head, verdict };
}

/** The record without the fields the listing adds to it (from, to, epoch_after, loss): what was hashed. */
function storedFields(view: AuditRecord & { from?: unknown; to?: unknown; epoch_after?: unknown; loss?: unknown }): AuditRecord {
  const { from: _from, to: _to, epoch_after: _after, loss: _loss, ...record } = view;
  return record;
}
