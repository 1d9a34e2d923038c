import Router from '@koa/router';
import { z } from 'zod';
import { type ApiDocument, route, HttpProblem } from '@baton/http';
import type { Readiness } from './readiness.js';

export const LIVEZ_PATH = '/livez';
export const READYZ_PATH = '/readyz';

const livezBody = z.object({ status: z.literal('live'), member: z.string() });
const readyzBody = z.object({ status: z.literal('ready'), member: z.string() });

/**
 * `GET /livez` (the process serves) and `GET /readyz` (the member can serve reads and writes
 * as of now), on every listener, without a credential: a load balancer or an orchestrator asks
 * them. An unready member answers 503 problem+json whose `reason` says why.
 */
export function healthRouter(member: string, readiness: Readiness, document: ApiDocument): Router {
  const router = new Router();
  route(
    router,
    document,
    {
      method: 'get',
      path: LIVEZ_PATH,
      summary: 'Liveness: the process is up and serving this listener (no credential needed)',
      operationId: 'getLiveness',
      tags: ['health'],
      open: true,
      responses: { 200: { description: 'The process is up', schema: livezBody, example: { status: 'live', member: 'n1' } } },
    },
    (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'live', member };
    },
  );
  route(
    router,
    document,
    {
      method: 'get',
      path: READYZ_PATH,
      summary: 'Readiness: this member knows a leader and has applied what was committed when it started (no credential needed)',
      operationId: 'getReadiness',
      tags: ['health'],
      open: true,
      responses: {
        200: { description: 'Ready', schema: readyzBody, example: { status: 'ready', member: 'n1' } },
        503: {
          description: 'Not ready: `reason` is no_leader (cut off from a quorum, or an election), catching_up (still applying what was committed at start) or stopped',
          example: {
            type: 'urn:baton:problem:not-ready',
            title: 'Not ready',
            status: 503,
            detail: 'no leader is known: this member is cut off from a quorum, or an election is under way',
            instance: '/readyz',
            reason: 'no_leader',
            member: 'n1',
          },
        },
      },
    },
    (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      const verdict = readiness.check();
      if (!verdict.ready) {
        throw new HttpProblem({
          status: 503,
          type: 'not-ready',
          title: 'Not ready',
          detail: verdict.detail,
          extra: { reason: verdict.reason, member },
          headers: { 'Retry-After': '1' },
        });
      }
      ctx.body = { status: 'ready', member };
    },
  );
  return router;
}
