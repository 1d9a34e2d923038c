import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Clock } from '../contracts/clock.js';
import type { ApiDocument } from './openapi.js';
import type { BatonMetrics } from './metrics.js';
import { routeTemplateOf } from './routes.js';

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
    }
  };
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
    tags: ['operations'],
    responses: { 200: { description: 'Metrics in the Prometheus text exposition format', contentType: 'text/plain' } },
  });
  return router;
}
