import Router from '@koa/router';
import type { Context } from 'koa';
import { requireScope, type ApiDocument, route } from '@baton/http';
import { clusterStatusExample, clusterStatusSchema, memberReportExample, memberReportSchema, type ClusterStatus, type MemberReport } from './schemas.js';

export interface ClusterRoutesOptions {
  scope: string;
  tags?: string[];
}

/** `GET {path}`: this member's own report, which the member assembling a picture asks each peer for. */
export function memberReportRouter(path: string, report: () => MemberReport, document: ApiDocument, options: ClusterRoutesOptions): Router {
  const router = new Router();
  route(
    router,
    document,
    {
      method: 'get',
      path,
      summary: "This member's own facts: role, leader, term, commit and applied index, readiness, event-loop delay",
      operationId: 'getMemberReport',
      tags: options.tags ?? ['cluster'],
      scope: options.scope,
      responses: { 200: { description: 'The member report', schema: memberReportSchema, example: memberReportExample } },
    },
    requireScope(options.scope),
    (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = report();
    },
  );
  return router;
}

/**
 * `GET {path}`: the picture of the whole cluster as this member sees it, each peer asked for
 * its report with the caller's own credential.
 */
export function clusterStatusRouter(
  path: string,
  status: (ctx: Context) => Promise<ClusterStatus>,
  document: ApiDocument,
  options: ClusterRoutesOptions,
): Router {
  const router = new Router();
  route(
    router,
    document,
    {
      method: 'get',
      path,
      summary: 'The cluster at a glance: every member with its role, term, indexes, readiness and liveness; leader; counts; transfers in flight',
      operationId: 'getClusterStatus',
      description:
        "Each peer is asked for its report (with the caller's own bearer token) within 1.5 s; a member that does not answer is listed as unreachable with the reason.",
      tags: options.tags ?? ['cluster'],
      scope: options.scope,
      responses: { 200: { description: 'The cluster picture', schema: clusterStatusSchema, example: clusterStatusExample } },
    },
    requireScope(options.scope),
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await status(ctx);
    },
  );
  return router;
}
