import type Router from '@koa/router';
import type Koa from 'koa';
import type { Clock, Logger, Rng } from '@baton/contracts';
import {
  createApiApp,
  type BearerTokens,
  type BatonMetrics,
  metricsRouter,
  type Tracing,
  type ApiDocument,
  type OperationSpec,
  openApiRouter,
  serveRouter,
  type DocumentedRoutes,
  EventStreams,
  type EventStreamLimits,
} from '@baton/http';
import {
  healthRouter,
  ConsensusReadiness,
  type Readiness,
  type RecentTransfers,
  consensusAdminRouter,
} from '@baton/cluster';
import { dashboardRouter } from '@baton/dashboard';
import { ADMIN_SCOPE, createAdminRouter, type AdminRouterOptions } from './admin-router.js';
import { streamApiDocument } from './api-document.js';
import { STREAM_CLUSTER_PATH, streamClusterRouters } from './cluster-view.js';
import type { DataPlaneOptions } from './data-access.js';
import { createDataRouter } from './data-router.js';
import { streamProblemMappers } from './problems.js';
import type { StreamNode } from './stream-node.js';

export interface StreamApiRouterOptions {
  metrics?: BatonMetrics;
  readiness?: Readiness;
  recent?: RecentTransfers;
  admin?: Partial<AdminRouterOptions>;
  /** Operations of routes mounted beside these (a consensus plugin's peer traffic), documented here too. */
  extraOperations?: readonly OperationSpec[];
  /** Who may use the data API without a token (closed by default). */
  dataPlane?: DataPlaneOptions;
  /** Bounds of the ownership feed's watchers on this listener. */
  watchers?: Partial<EventStreamLimits>;
}

/**
 * Every router a stream node serves on its listener, with the document that describes them:
 * the health probes, the data and admin API, GET /openapi.json and, with metrics, GET /metrics.
 * One list, so the app and the test that holds the document true see the same routes. Without
 * a started `readiness`, /readyz says the node is still catching up.
 */
export function streamApiRouters(node: StreamNode, options: StreamApiRouterOptions = {}): { routers: Router[]; document: ApiDocument } {
  const { metrics, recent, admin = {}, extraOperations = [] } = options;
  const readiness = options.readiness ?? new ConsensusReadiness(node.consensus, node.clock);
  const document = streamApiDocument();
  for (const operation of extraOperations) document.operation(operation);
  const canFence = () => node.store.supports.conditionalPut;
  const routers = [
    healthRouter(node.self, readiness, document),
    ...streamClusterRouters(node, readiness, recent, document),
    dashboardRouter(document, { clusterPath: STREAM_CLUSTER_PATH }),
    createDataRouter(node, options.dataPlane, new EventStreams(node.clock, options.watchers)),
    createAdminRouter(node.consensus, { canFence, clock: node.clock, ...admin }),
    consensusAdminRouter(node.consensus, document, {
      prefix: '/v1/admin',
      readScope: ADMIN_SCOPE,
      writeScope: ADMIN_SCOPE,
      tags: ['admin'],
      variant: 'stream-transfer',
      self: node.self,
      consensusName: node.consensus.constructor.name,
    }),
  ];
  if (metrics) routers.push(metricsRouter(metrics, document));
  routers.push(openApiRouter(document));
  return { routers, document };
}

/** The HTTP app of one stream node: the data API for everyone, the admin API behind a scope. */
export function createStreamApiApp(deps: {
  node: StreamNode;
  tokens: BearerTokens;
  clock: Clock;
  rng: Rng;
  logger: Logger;
  /** Request durations by route and status, and GET /metrics. */
  metrics?: BatonMetrics;
  /** Mounted before the stream routes (a consensus plugin's peer traffic), and documented. */
  extraRoutes?: DocumentedRoutes[];
  /** What /readyz answers from (the service starts it with the node). */
  readiness?: Readiness;
  /** The transfers this node settled lately, for the dashboard's plot. */
  recent?: RecentTransfers;
  /** Liveness and failover details of the admin API. */
  admin?: Partial<AdminRouterOptions>;
  dataPlane?: DataPlaneOptions;
  watchers?: Partial<EventStreamLimits>;
  /** Server spans of this listener's requests, when the host traces. */
  tracing?: Tracing;
}): Koa {
  const app = createApiApp({
    clock: deps.clock,
    rng: deps.rng,
    logger: deps.logger,
    tokens: deps.tokens,
    mappers: streamProblemMappers,
    metrics: deps.metrics,
    listener: 'streams',
    tracing: deps.tracing,
  });
  const extra = deps.extraRoutes ?? [];
  for (const { routes } of extra) app.use(routes);
  const operations = extra.flatMap((routes) => routes.operations);
  const { routers } = streamApiRouters(deps.node, { ...deps, extraOperations: operations });
  for (const router of routers) app.use(serveRouter(router));
  return app;
}
