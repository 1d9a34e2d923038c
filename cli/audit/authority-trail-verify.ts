import type { AuditRecord } from '@baton/contracts';
import { MAX_AUDIT_PAGE } from '@baton/authority-transfer';
import { verifyAuditTrail } from '@baton/stream-transfer';
import { adminRequest } from '../admin-client.js';
import type { Connection } from '../connection.js';

/** A trail head as GET /availability/v1/audit/chain answers it. */
interface TrailHead {
  records: number;
  hash: string;
  commit_index: number;
  seq: number;
}

interface AuthorityChain {
  authority: string;
  head: TrailHead | null;
  anchors: TrailHead[];
}

async function get<T>(connection: Connection, path: string): Promise<T> {
  const { body } = await adminRequest<T>(connection.url, { method: 'GET', path, token: connection.token }, connection.fetch);
  return body;
}

/**
 * Verifies one authority's trail as an authority member's audit store holds it: the chain head
 * and anchors the replicated state keeps (read first, so every record they name is committed),
 * then the whole trail in pages, oldest first, through the same check the stream trail takes.
 */
export async function verifyAuthorityTrail(connection: Connection, authority: string) {
  const subject = encodeURIComponent(authority);
  const chain = await get<AuthorityChain>(connection, `/availability/v1/audit/chain?subject=${subject}`);
  const newestFirst: AuditRecord[] = [];
  let before: number | null = null;
  for (;;) {
    const cursor: string = before === null ? '' : `&before=${before}`;
    const page: { records: AuditRecord[]; next: number | null } = await get(connection, `/availability/v1/audit?subject=${subject}&limit=${MAX_AUDIT_PAGE}${cursor}`);
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
