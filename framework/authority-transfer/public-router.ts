import Router from '@koa/router';
import { z } from 'zod';
import {
  decimalQuery,
  requireScope,
  assertPeerSender,
  markPeerRoute,
  requirePeer,
  type PeerAuthenticator,
  peekState,
  HttpProblem,
  problems,
  retryAfter,
  readValidBody,
  type ApiDocument,
  route,
  validate,
} from '@baton/http';
import type { Clock, IdentitySupplier } from '@baton/contracts';
import type { Context, Middleware } from 'koa';
import { authorityExamples as ex, authorityProblemExtensions } from './api-examples.js';
import { appliedSerialSchema, feedPageSchema, ownershipEventSchema, writeResultSchema } from './api-schemas.js';
import type { AuthorityOwnershipFeed } from './authority-ownership-feed.js';
import type { ChangeFeed, FeedOrigin } from './change-feed.js';
import { AppliedWaitRefusedError, DEFAULT_APPLIED_WAIT_LIMITS, type AppliedWaits } from './applied-waits.js';
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

const appliedQueryOf = (maxWaitMs: number) =>
  z.object({
    incarnation: z.string().min(1).max(200).optional().describe('With atLeast: the incarnation of the origin feed the serial counts in'),
    atLeast: decimalQuery('atLeast', (n) => n.int().min(0).max(Number.MAX_SAFE_INTEGER)).optional().describe('Answer once this member holds the feed through this serial (a waiting probe)'),
    waitMs: decimalQuery('waitMs', (n) => n.int().min(1).max(maxWaitMs)).optional().describe('With atLeast: answer after this long with what this member holds'),
  });
const authorityParam = z.object({ authority: z.string().min(1) });

const writeBody = z
  .object({
    operation: z.string().min(1, 'name the operation'),
    epoch: z.number().int().min(1, 'the epoch the write was issued under'),
  })
  .strict();

export interface PublicRouterDeps {
  /** This member's clock: each feed page carries it, so the puller reads the skew between them. */
  clock: Pick<Clock, 'now'>;
  feed: ChangeFeed;
  replicas: FeedReplicas;
  /** Answers the waiting probes (?atLeast=&waitMs=); without it the route answers at once, as members did before them. */
  waits?: AppliedWaits;
  identity: IdentitySupplier;
  /** Present in mode ha: writes are fenced by the ownership consensus. */
  fence?: WriteFence;
  /** Member credentials on the peer routes; without it (or insecure) a bearer token with scope "peer". */
  peerAuth?: PeerAuthenticator;
  /** Present in mode ha: the authorities' ownership feeds. */
  ownership?: AuthorityOwnershipFeed;
}

/**
 * The public server every roster address names: peer traffic (change feeds and the applied
 * serial a barrier probe reads) and fenced writes to authorities.
 */
export function createPublicRouter(deps: PublicRouterDeps, document: ApiDocument): Router {
  const router = new Router({ prefix: '/availability/v1' });
  document.problemExtensions(authorityProblemExtensions);
  const secure = deps.peerAuth !== undefined && !deps.peerAuth.insecure;
  // Either gate marks the request as a peer route's: its refusals are counted as peer refusals.
  const peerGate: Middleware[] = secure ? [requirePeer(deps.peerAuth!)] : [markPeerRoute, requireScope(PEER_SCOPE)];
  const peerSecurity = secure ? { peer: true as const } : { scope: PEER_SCOPE };
  const appliedQuery = appliedQueryOf(deps.waits?.limits.maxWaitMs ?? DEFAULT_APPLIED_WAIT_LIMITS.maxWaitMs);

  route(
    router,
    document,
    {
      method: 'get',
      path: '/feed',
      summary: "This member's change feed after a serial",
      operationId: 'readFeed',
      tags: ['peers', 'internal'],
      ...peerSecurity,
      params: { query: feedQuery },
      responses: { 200: { description: 'A page of the feed', schema: feedPageSchema, example: ex.feed }, 400: 'Invalid query' },
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
      ctx.body = { member: deps.feed.self, incarnation: deps.feed.incarnation, serial: deps.feed.serial(), entries, truncated, clock: deps.clock.now() };
    },
  );

  route(
    router,
    document,
    {
      method: 'get',
      path: '/feeds/{origin}/applied',
      summary: "How far this member has applied a member's feed (what a barrier probe reads), at once or once it holds a serial",
      operationId: 'getAppliedSerial',
      tags: ['peers', 'internal'],
      ...peerSecurity,
      params: { path: originParam, query: appliedQuery },
      responses: {
        200: { description: 'The applied serial, in the incarnation it counts in; `wait` echoes a wait this member held', schema: appliedSerialSchema, example: ex.applied },
        400: 'Invalid query (a wait longer than this member holds one, a negative serial)',
        422: 'A wait that does not name the serial, the incarnation and how long',
        429: 'Too many waits parked here already (by this requester or in all): read again later',
      },
    },
    ...peerGate,
    async (ctx) => {
      const origin = ctx.params.origin;
      const query = validate(appliedQuery, ctx.query, 'query');
      const asked = waitOf(query);
      const own = origin === deps.feed.self;
      // A probe never waits on the target's own feed (the target is another datacenter): that answers at once.
      const wait = own || !deps.waits ? undefined : asked;
      const position =
        own
          ? { incarnation: deps.feed.incarnation, serial: deps.feed.serial(), storage: deps.feed.incarnation }
          : wait
            ? await parkedWait(ctx, deps.waits!, deps.replicas, { member: origin, incarnation: wait.incarnation }, wait)
            : deps.replicas.applied(origin);
      const held = wait ? { wait: { atLeast: wait.atLeast, reached: position.incarnation === wait.incarnation && position.serial >= wait.atLeast } } : {};
      ctx.body = { member: deps.feed.self, origin, incarnation: position.incarnation ?? null, serial: position.serial, storage: position.storage ?? null, ...held };
    },
  );

  route(
    router,
    document,
    {
      method: 'post',
      path: '/authorities/{authority}/writes',
      summary: 'Write to an authority at its home, under its current epoch',
      operationId: 'writeToAuthority',
      tags: ['authorities'],
      scope: AUTHORITY_WRITE_SCOPE,
      params: { path: authorityParam },
      requestBody: writeBody,
      requestExample: ex.write,
      responses: {
        200: { description: 'The write is durable in this member\'s feed', schema: writeResultSchema, example: ex.written },
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

  route(
    router,
    document,
    {
      method: 'get',
      path: '/authorities/{authority}/ownership',
      summary: "An authority's home, epoch and registered transfer as server-sent events: at once and on every change",
      operationId: 'watchAuthorityOwnership',
      description:
        'Send Accept: text/event-stream. An `ownership` event comes at once (after this member caught up with the leader\'s commit) and ' +
        'again whenever the home or epoch changes (a planned transfer\'s commit, a failover) or a planned transfer is registered, frozen or ' +
        'called off; a heartbeat comment every 15 s. A writer sends its writes to `home_urls` before one is refused with 421. ' +
        'Each member holds a bounded number of watchers (503 beyond, with Retry-After); a watcher that does not read is dropped.',
      tags: ['authorities'],
      scope: AUTHORITY_WRITE_SCOPE,
      params: { path: authorityParam },
      responses: {
        200: {
          description: 'The feed (text/event-stream); with Accept: application/json, the ownership now',
          schema: ownershipEventSchema,
          example: ex.ownershipEvent,
          events: { name: 'ownership', schema: ownershipEventSchema, example: ex.ownershipEvent },
        },
        404: 'The authority has no home',
        503: 'Mode dc, the ownership consensus cannot answer, or this member holds as many watchers as it may (Retry-After)',
      },
    },
    requireScope(AUTHORITY_WRITE_SCOPE),
    async (ctx) => {
      if (!deps.ownership) {
        throw new OwnershipUnavailableError('this node runs in mode dc: ownership lives in the ownership consensus of mode ha');
      }
      const authority = deps.identity.authority(ctx.params.authority);
      if (ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream') {
        await deps.ownership.watch(ctx, authority);
        return;
      }
      ctx.body = await deps.ownership.current(authority);
    },
  );

  return router;
}

interface AppliedWait {
  incarnation: string;
  atLeast: number;
  waitMs: number;
}

/** The wait a query asks for, if any: all three of atLeast, waitMs and incarnation, or none. */
function waitOf(query: { incarnation?: string; atLeast?: number; waitMs?: number }): AppliedWait | undefined {
  const { incarnation, atLeast, waitMs } = query;
  if (atLeast === undefined && waitMs === undefined) return undefined;
  if (atLeast === undefined || waitMs === undefined || incarnation === undefined) {
    throw problems.unprocessable('a waiting probe names atLeast (the serial), waitMs (how long at most) and incarnation (the history the serial counts in)');
  }
  return { incarnation, atLeast, waitMs };
}

/**
 * Holds the answer until the replica has the serial or the wait runs out; the caller hanging up
 * ends it at once (its place is freed). Keyed by the authenticated member, or the bearer token's
 * principal, so one requester cannot take every place.
 */
async function parkedWait(ctx: Context, waits: AppliedWaits, replicas: FeedReplicas, origin: FeedOrigin, wait: AppliedWait) {
  const requester = peekState(ctx, 'peer')?.member ?? peekState(ctx, 'principal')?.name ?? 'anonymous';
  const hungUp = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) hungUp.abort(new Error('the prober hung up'));
  };
  ctx.res.once('close', onClose);
  try {
    return await waits.wait(origin, wait.atLeast, wait.waitMs, { requester, signal: hungUp.signal });
  } catch (error) {
    // Nobody reads the answer now; an ordinary one keeps a hang-up out of the error log.
    if (hungUp.signal.aborted) return replicas.applied(origin.member);
    if (error instanceof AppliedWaitRefusedError) {
      throw new HttpProblem({ status: 429, type: 'too-many-waits', detail: error.message, headers: retryAfter(1) });
    }
    throw error;
  } finally {
    ctx.res.off('close', onClose);
  }
}
