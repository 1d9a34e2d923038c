import type Router from '@koa/router';
import type { Middleware } from 'koa';

/**
 * A router's routes plus its method checks: a known path with the wrong method answers 405
 * with Allow, an unknown method 501 (the problem middleware gives both a body). Mount routers
 * through this rather than `router.routes()` alone, or a wrong method falls through to 404.
 */
export function serveRouter(router: Router<any, any>): Middleware {
  const routes = router.routes() as Middleware;
  const allowed = router.allowedMethods() as Middleware;
  return (ctx, next) => routes(ctx, () => allowed(ctx, next));
}
