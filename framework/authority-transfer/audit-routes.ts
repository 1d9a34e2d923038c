import type { Context, Middleware } from 'koa';
import type { AuthorityId, IdentitySupplier } from '@baton/contracts';
import { problems, validate, type OperationSpec } from '@baton/http';
import { authorityExamples as ex } from './api-examples.js';
import {
  auditChainQuery,
  auditChainSchema,
  auditListingSchema,
  auditPageQuery,
  auditPageSchema,
  auditQuery,
  authorityAuditListing,
  authorityAuditPage,
  auditRecordView,
  DEFAULT_AUDIT_PAGE,
  MAX_AUDIT_PAGE,
} from './audit-page.js';
import type { HaPieces } from './control-router.js';
import { auditRecordViewSchema } from './api-schemas.js';
import { z } from 'zod';

/** A record id: a raw move's `<commit_index>-<seq>`, or a planned transfer's key (an Idempotency-Key). */
const auditIdParam = z.object({ id: z.string().regex(/^[A-Za-z0-9._:~-]{1,128}$/, 'a record id is <commit_index>-<seq>, or a planned transfer\'s key') });

/** What the audit routes take of the control router: its route helpers and mode ha pieces. */
export interface AuditRouteDeps {
  scopedRoute: (spec: OperationSpec & { scope: string }, handler: Middleware<any, any>) => void;
  authorityRoute: (
    spec: OperationSpec & { scope: string },
    handler: (ctx: Context, authority: AuthorityId, pieces: HaPieces) => Promise<void> | void,
  ) => void;
  ha: () => HaPieces;
  /** Catches this member up with the leader's commit before it reads. */
  caughtUp: () => Promise<void>;
  identity: IdentitySupplier;
  /** The 503 the listener documents when the metadata store or consensus cannot answer. */
  unavailable: string;
  readScope: string;
}

/**
 * The control listener's audit reads: an authority's trail as this member's audit store holds
 * it (as stored, and as the stream nodes' listing shows it), and the chain head and anchors the
 * replicated state keeps, which a verify checks the store against.
 */
export function routeAudit(deps: AuditRouteDeps): void {
  const { scopedRoute, authorityRoute, ha, caughtUp } = deps;
  const UNAVAILABLE = deps.unavailable;
  const ADMIN_READ_SCOPE = deps.readScope;
  authorityRoute(
    {
      method: 'get',
      path: '/authorities/{authority}/audit',
      summary: `This member's durable audit of an authority's moves (planned transfers and raw moves), newest first, in pages: at most \`limit\` (default ${DEFAULT_AUDIT_PAGE}, at most ${MAX_AUDIT_PAGE}) records whose commit_index is below \`before\`; \`next\` is the \`before\` of the next page, null on the last`,
      operationId: 'listAuthorityAudit',
      tags: ['authorities'],
      scope: ADMIN_READ_SCOPE,
      params: { query: auditPageQuery },
      responses: {
        200: { description: 'The sealed records this member has stored', schema: auditPageSchema, example: ex.audit },
        400: 'Invalid authority identity, limit or before',
      },
    },
    async (ctx, authority, { audit }) => {
      ctx.body = await authorityAuditPage(audit, authority, validate(auditPageQuery, ctx.query, 'query'));
    },
  );

  scopedRoute(
    {
      method: 'get',
      path: '/audit',
      operationId: 'listAudit',
      summary: `This member's durable audit trail of one authority (\`subject\`), newest first, as the stream nodes' /v1/admin/audit pages: \`kind\` filters (unknown: 400), an authority without a home answers 400, at most \`limit\` (default ${DEFAULT_AUDIT_PAGE}, at most ${MAX_AUDIT_PAGE}) records below \`before\`; a page past the end is empty`,
      tags: ['authorities'],
      scope: ADMIN_READ_SCOPE,
      params: { query: auditQuery },
      responses: {
        200: { description: 'The sealed records this member has stored, each with from/to/epoch_after (and a failover\'s loss) named', schema: auditListingSchema, example: ex.listing },
        400: 'Invalid or unknown subject, kind, limit or before',
        503: UNAVAILABLE,
      },
    },
    async (ctx) => {
      const { audit, consensus } = ha();
      const query = validate(auditQuery, ctx.query, 'query');
      const authority = deps.identity.authority(query.subject);
      await caughtUp();
      // A misspelt authority answers 400, not an empty history that reads as "never moved".
      if (!consensus.view().state.authorities.get(authority)) {
        throw problems.badRequest(`subject ${authority} is no authority with a home`, { subject: authority });
      }
      ctx.body = await authorityAuditListing(audit, authority, query);
    },
  );

  scopedRoute(
    {
      method: 'get',
      path: '/audit/chain',
      operationId: 'getAuditChain',
      summary:
        "The head and anchors of one authority's (`subject`) audit hash chain, as the replicated state holds them: what `baton audit verify` checks a member's stored trail against",
      tags: ['authorities'],
      scope: ADMIN_READ_SCOPE,
      params: { query: auditChainQuery },
      responses: {
        200: { description: 'The chain head (null before the first sealed record) and anchors', schema: auditChainSchema, example: ex.chain },
        400: 'Invalid or unknown subject',
        503: UNAVAILABLE,
      },
    },
    async (ctx) => {
      const { consensus } = ha();
      const query = validate(auditChainQuery, ctx.query, 'query');
      const authority = deps.identity.authority(query.subject);
      // Linearizable: the head is at least as new as any record this member's store can hold.
      const { state } = await consensus.read();
      if (!state.authorities.get(authority)) {
        throw problems.badRequest(`subject ${authority} is no authority with a home`, { subject: authority });
      }
      const chain = state.chains.get(authority);
      ctx.body = { authority, head: chain?.head ?? null, anchors: [...(chain?.anchors ?? [])] };
    },
  );

  // After /audit/chain, which the router matches first.
  scopedRoute(
    {
      method: 'get',
      path: '/audit/{id}',
      operationId: 'getAuditRecord',
      summary: "One record of this member's audit store by id (a raw move's <commit_index>-<seq>, or a planned transfer's key), as the listing shows it",
      tags: ['authorities'],
      scope: ADMIN_READ_SCOPE,
      params: { path: auditIdParam },
      responses: {
        200: { description: 'The record, with from/to/epoch_after (and a failover\'s loss) named', schema: auditRecordViewSchema, example: ex.listing.records[1] },
        400: 'Not a record id',
        404: "No record with this id in this member's audit store",
        503: UNAVAILABLE,
      },
    },
    async (ctx) => {
      const { audit } = ha();
      const { id } = validate(auditIdParam, ctx.params, 'path');
      const record = await audit.byId(id);
      if (!record) throw problems.notFound(`no audit record ${id} in this member's audit store`, { id });
      ctx.body = auditRecordView(record);
    },
  );
}
