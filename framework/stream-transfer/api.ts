import type Koa from 'koa';
import type { Middleware } from 'koa';
import type { Clock } from '../contracts/clock.js';
import type { Logger } from '../contracts/logger.js';
import type { Rng } from '../contracts/rng.js';
import { createApiApp } from '../http/api-app.js';
import type { BearerTokens } from '../http/auth.js';
import { serveRouter } from '../http/routes.js';
import { createAdminRouter } from './admin-router.js';
import { createDataRouter } from './data-router.js';
import { streamProblemMappers } from './problems.js';
import type { StreamNode } from './stream-node.js';

/** The HTTP app of one stream node: the data API for everyone, the admin API behind a scope. */
export function createStreamApiApp(deps: {
  node: StreamNode;
  tokens: BearerTokens;
  clock: Clock;
  rng: Rng;
  logger: Logger;
  /** Mounted before the stream routes (a consensus plugin's peer traffic). */
  extraRoutes?: Middleware[];
}): Koa {
  const app = createApiApp({
    clock: deps.clock,
    rng: deps.rng,
    logger: deps.logger,
    tokens: deps.tokens,
    mappers: streamProblemMappers,
  });
  for (const routes of deps.extraRoutes ?? []) app.use(routes);
  app.use(serveRouter(createDataRouter(deps.node)));
  app.use(serveRouter(createAdminRouter(deps.node.consensus)));
  return app;
}
