import Koa, { type Middleware } from 'koa';
import type { Clock, Logger, Rng } from '@baton/contracts';
import { authenticate, type BearerTokens } from './auth.js';
import { BodyAdmission, bodyAdmission } from './body-admission.js';
import type { BatonMetrics } from './metrics.js';
import { httpMetrics } from './metrics-http.js';
import { problemHandling } from './problem-middleware.js';
import type { ProblemMapper } from './problem-mapping.js';
import { requestContext } from './request-context.js';
import { serverSpans, type Tracing } from './tracing.js';

export interface ApiAppOptions {
  clock: Clock;
  rng: Rng;
  logger: Logger;
  /** When given, `requireScope` works on every route of this app. */
  tokens?: BearerTokens;
  /** A variant's own error meanings, tried before the defaults. */
  mappers?: readonly ProblemMapper[];
  /** When given, every request's duration is observed under `listener` (default "http"). */
  metrics?: BatonMetrics;
  listener?: string;
  /** The budget of request body bytes in flight; by default one of DEFAULT_BODY_BYTES_IN_FLIGHT for this app. */
  bodyAdmission?: BodyAdmission;
  /** When enabled, a server span per request (routes.ts' templates as names; probes, scrapes and Raft's own traffic untraced). */
  tracing?: Tracing;
  /** Runs around problem handling, below the request id: observers that need the final status. */
  outer?: readonly Middleware[];
}

/**
 * A koa app with the shared middleware in the one order that works: the request id first (so
 * even an error answer carries it), then observers such as metrics (they see the final
 * status), then problem handling, then authentication. Mount routers with `serveRouter`.
 */
export function createApiApp(options: ApiAppOptions): Koa {
  const app = new Koa();
  // Errors never reach koa's default handler (problemHandling answers them), but a failure
  // while writing a response still would: log it through ours instead of stderr.
  app.silent = true;
  app.on('error', (error) => options.logger.error({ err: error }, 'response could not be written'));
  app.use(requestContext({ clock: options.clock, rng: options.rng, logger: options.logger }));
  // Outside metrics and problem handling, so the span sees the final status and covers the whole request.
  app.use(serverSpans(options.tracing, options.listener ?? 'http'));
  if (options.metrics) app.use(httpMetrics(options.metrics, options.clock, options.listener));
  for (const middleware of options.outer ?? []) app.use(middleware);
  app.use(problemHandling({ logger: options.logger, mappers: options.mappers }));
  if (options.tokens) app.use(authenticate(options.tokens));
  const listener = options.listener ?? 'http';
  app.use(
    bodyAdmission(
      options.bodyAdmission ??
        new BodyAdmission({ clock: options.clock, onRefusal: () => options.metrics?.bodyBudgetRefusals.inc({ listener }) }),
    ),
  );
  return app;
}
