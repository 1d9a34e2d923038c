import Router from '@koa/router';
import { z } from 'zod';
import type { Middleware } from 'koa';
import type { Clock } from '@baton/contracts';
import type { ApiDocument } from './openapi.js';
import type { BatonMetrics } from './metrics.js';
import { routeTemplateOf } from './routes.js';
import { isPeerRouteRequest } from './peer-auth.js';
import { PROBLEM_TYPE_PREFIX } from './problem.js';

/**
 * Observes every request's duration under its route template (`/v1/streams/{stream}`), never
 * the raw path, so a scan of random URLs cannot explode the number of series; a refused
 * request (401, 403) counts under the route it asked for. Requests for no route share the
 * label `unmatched`. Mount it outside problem handling (see
 * createApiApp's `outer`) so it sees the final status.
 */
export function httpMetrics(metrics: BatonMetrics, clock: Clock, listener = 'http'): Middleware {
  return async (ctx, next) => {
    const started = clock.now();
    let status: number | undefined;
    try {
      await next();
      status = ctx.status;
    } finally {
      const route = routeTemplateOf(ctx) ?? 'unmatched';
      metrics.httpRequestDuration.observe(
        { listener, method: ctx.method, route, status: String(status ?? 500) },
        (clock.now() - started) / 1000,
      );
      const answered = status ?? 500;
      if (isPeerRouteRequest(ctx) && ((answered >= 400 && answered < 500) || answered === 503)) {
        metrics.peerRefusals.inc({ listener, route, reason: refusalReason(ctx.body, answered) });
      }
    }
  };
}

/** The problem type of a refusal without its URN prefix (`json-limits`), else `http_<status>`. */
function refusalReason(body: unknown, status: number): string {
  const type = body && typeof body === 'object' ? (body as { type?: unknown }).type : undefined;
  if (typeof type === 'string' && type.startsWith(PROBLEM_TYPE_PREFIX)) return type.slice(PROBLEM_TYPE_PREFIX.length).slice(0, 64);
  return `http_${status}`;
}

/** `GET /metrics` in the Prometheus text format; documented in `document` when given. */
export function metricsRouter(metrics: BatonMetrics, document?: ApiDocument): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    const { contentType, body } = await metrics.render();
    ctx.type = contentType;
    ctx.body = body;
  });
  document?.operation({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics of this host',
    operationId: 'getMetrics',
    tags: ['operations'],
    // Scraped by Prometheus, which is configured with no token; the series hold no secret.
    open: true,
    responses: {
      200: {
        description: 'Metrics in the Prometheus text exposition format',
        contentType: 'text/plain',
        schema: z.string(),
        example: '# TYPE baton_transfers_total counter\nbaton_transfers_total{outcome="completed",node="n1"} 1\n',
      },
    },
  });
  return router;
}
