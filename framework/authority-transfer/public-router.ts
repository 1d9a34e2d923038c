import Router from '@koa/router';
import { z } from 'zod';
import { decimalQuery } from '../http/query-number.js';
import type { IdentitySupplier } from '../contracts/identity-supplier.js';
import type { Middleware } from 'koa';
import { requireScope } from '../http/auth.js';
import { assertPeerSender, markPeerRoute, requirePeer, type PeerAuthenticator } from '../http/peer-auth.js';
import { peekState } from '../http/state.js';
import { readValidBody } from '../http/json-body.js';
import type { ApiDocument } from '../http/openapi.js';
import { route } from '../http/openapi-routes.js';
import { validate } from '../http/validate.js';
import { appliedSerialSchema, feedPageSchema, writeResultSchema } from './api-schemas.js';
import type { ChangeFeed } from './change-feed.js';
import type { FeedReplicas } from './feed-replicas.js';
import type { WriteFence } from './write-fence.js';
import { OwnershipUnavailableError } from './transfer-errors.js';

/** Peers present this scope to read each other's feeds. */
export const PEER_SCOPE = 'peer';
/** Clients present this scope to write to an authority. */
export const AUTHORITY_WRITE_SCOPE = 'authority:write';

const feedQuery = z.object({
  after: decimalQuery('after', (n) => n.int().min(0)).default(0).describe('Serial the caller holds through'),
  limit: decimalQuery('limit', (n) => n.int().min(1).max(10_000)).default(1_000),
  incarnation: z.string().min(1).optional().describe('The incarnation `after` counts in'),
  from: z.string().min(1).optional().describe('The pulling member: its progress lets this feed trim what every peer holds'),
});

const originParam = z.object({ origin: z.string().min(1) });
const authorityParam = z.object({ authority: z.string().min(1) });

const writeBody = z
  .object({
    operation: z.string().min(1, 'name the operation'),
    epoch: z.number().int().min(1, 'the epoch the write was issued under'),
  })
  .strict();

export interface PublicRouterDeps {
  feed: ChangeFeed;
  replicas: FeedReplicas;
  identity: IdentitySupplier;
  /** Present in mode ha: writes are fenced by the ownership consensus. */
  fence?: WriteFence;
  /** Member credentials on the peer routes; without it (or insecure) a bearer token with scope "peer". */
  peerAuth?: PeerAuthenticator;
}

/**
 * The public server every roster address names: peer traffic (change feeds and the applied
 * serial a barrier probe reads) and fenced writes to authorities.
 */
export function createPublicRouter(deps: PublicRouterDeps, document: ApiDocument): Router {
  const router = new Router({ prefix: '/availability/v1' });
  const secure = deps.peerAuth !== undefined && !deps.peerAuth.insecure;
  // Either gate marks the request as a peer route's: its refusals are counted as peer refusals.
  const peerGate: Middleware[] = secure ? [requirePeer(deps.peerAuth!)] : [markPeerRoute, requireScope(PEER_SCOPE)];
  const peerSecurity = secure ? { peer: true as const } : { scope: PEER_SCOPE };

  route(
    router,
    document,
    {
      method: 'get',
      path: '/feed',
      summary: "This member's change feed after a serial",
      tags: ['peers', 'internal'],
      ...peerSecurity,
      params: { query: feedQuery },
      responses: { 200: { description: 'A page of the feed', schema: feedPageSchema }, 400: 'Invalid query' },
    },
    ...peerGate,
    async (ctx) => {
      const { after, limit, incarnation, from } = validate(feedQuery, ctx.query, 'query');
      // A member's progress trims the feed: only that member, authenticated, may report it.
      if (from !== undefined && peekState(ctx, 'peer')?.authenticated) assertPeerSender(ctx, from);
      // A pull under the current incarnation says the puller holds everything through `after`.
      if (from !== undefined && incarnation !== undefined) deps.feed.notePeerProgress(from, incarnation, after);
      const { entries, truncated } = incarnation === undefined || incarnation === deps.feed.incarnation
        ? deps.feed.read(after, limit)
        : deps.feed.read(0, limit);
      ctx.body = { member: deps.feed.self, incarnation: deps.feed.incarnation, serial: deps.feed.serial(), entries, truncated };
    },
  );

  route(
    router,
    document,
    {
      method: 'get',
      path: '/feeds/{origin}/applied',
      summary: "How far this member has applied a member's feed (what a barrier probe reads)",
      tags: ['peers', 'internal'],
      ...peerSecurity,
      params: { path: originParam },
      responses: { 200: { description: 'The applied serial, in the incarnation it counts in', schema: appliedSerialSchema } },
    },
    ...peerGate,
    async (ctx) => {
      const origin = ctx.params.origin;
      const position =
        origin === deps.feed.self
          ? { incarnation: deps.feed.incarnation, serial: deps.feed.serial(), storage: deps.feed.incarnation }
          : deps.replicas.applied(origin);
      ctx.body = { member: deps.feed.self, origin, incarnation: position.incarnation ?? null, serial: position.serial, storage: position.storage ?? null };
    },
  );

  route(
    router,
    document,
    {
      method: 'post',
      path: '/authorities/{authority}/writes',
      summary: 'Write to an authority at its home, under its current epoch',
      tags: ['authorities'],
      scope: AUTHORITY_WRITE_SCOPE,
      params: { path: authorityParam },
      requestBody: writeBody,
      responses: {
        200: { description: 'The write is durable in this member\'s feed', schema: writeResultSchema },
        409: 'The epoch is stale: the authority moved; the write is rejected and never finalised',
        421: 'This datacenter is not the authority\'s home',
        503: 'Mode dc, the ownership consensus or the feed is unavailable, the authority is frozen by a transfer, or this new home has not yet caught up on the final serials its move recorded (Retry-After)',
      },
    },
    requireScope(AUTHORITY_WRITE_SCOPE),
    async (ctx) => {
      if (!deps.fence) {
        throw new OwnershipUnavailableError('this node runs in mode dc: fenced writes need the ownership consensus of mode ha');
      }
      const authority = deps.identity.authority(ctx.params.authority);
      const body = await readValidBody(ctx, writeBody);
      const entry = await deps.fence.write(authority, body.epoch, body.operation);
      ctx.body = { authority, epoch: entry.epoch, serial: entry.serial };
    },
  );

  return router;
}
