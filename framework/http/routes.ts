import { token } from '@baton/contracts';
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { openApiPath } from './openapi-paths.js';

/** Marks the middleware serveRouter returns with the router it serves. */
const SERVED_ROUTER = Symbol('baton.servedRouter');

interface RouteLayer {
  path: unknown;
  methods: readonly string[];
}
import type { OperationSpec } from './openapi.js';

/**
 * A router's routes plus its method checks: a known path with the wrong method answers 405
 * with Allow, an unknown method 501 (the problem middleware gives both a body). Mount routers
 * through this rather than `router.routes()` alone, or a wrong method falls through to 404.
 */
export function serveRouter(router: Router<any, any>): Middleware {
  const routes = router.routes() as Middleware;
  const allowed = router.allowedMethods() as Middleware;
  const serve: Middleware = (ctx, next) => routes(ctx, () => allowed(ctx, next));
  return Object.assign(serve, { [SERVED_ROUTER]: router });
}

/**
 * The OpenAPI template of the route a request is for (`/v1/streams/{stream}`), or undefined
 * when no route serves its path. Read from the route itself, not from whatever middleware ran
 * last: a router-wide guard (`router.use(requireScope(...))`) that refuses the request before
 * the route runs would otherwise leave its own pattern as the "matched route". A request
 * refused before any router saw it (a bearer token the server does not know) is matched here
 * against the app's routers, so its answer counts under the route it asked for too.
 */
export function routeTemplateOf(ctx: Context): string | undefined {
  const routing = ctx as { matched?: readonly RouteLayer[]; _matchedRoute?: unknown };
  const ran = routing._matchedRoute;
  // The route that answered, when one did (a guard that answered leaves its own pattern there).
  if (typeof ran === 'string' && routing.matched?.some((l) => l.methods.length > 0 && l.path === ran)) {
    return openApiPath(ran);
  }
  const fromRouting = routing.matched && routeLayerOf(routing.matched, ctx.method);
  if (fromRouting) return fromRouting;
  for (const middleware of ctx.app?.middleware ?? []) {
    const router = (middleware as { [SERVED_ROUTER]?: Router<any, any> })[SERVED_ROUTER];
    if (!router) continue;
    const found = routeLayerOf(router.match(ctx.path, ctx.method).path as RouteLayer[], ctx.method);
    if (found) return found;
  }
  return undefined;
}

/**
 * The route that would have answered among layers matching a path: the first for the method
 * (the router runs them in order), else the first of any method (a 405).
 */
function routeLayerOf(layers: readonly RouteLayer[], method: string): string | undefined {
  const routes = layers.filter((l) => l.methods.length > 0 && typeof l.path === 'string');
  const layer = routes.find((l) => l.methods.includes(method)) ?? routes[0];
  return layer ? openApiPath(layer.path as string) : undefined;
}

/**
 * Routes a plugin serves on a listener it does not own (a consensus transport's peer traffic),
 * with the operations that describe them, so the listener's /openapi.json lists them too.
 */
export interface DocumentedRoutes {
  routes: Middleware;
  operations: readonly OperationSpec[];
}

/**
 * Routes a plugin serves on the member's peer-facing listener (the address its peers are given:
 * a stream node's listener, an authority member's public server), e.g. Raft over HTTP. A variant
 * knows no consensus plugin and a consensus plugin no variant: both meet at this token.
 */
export const PEER_ROUTES = token<DocumentedRoutes[]>('http.PeerRoutes');
