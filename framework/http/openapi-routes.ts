import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { ApiDocument, OperationSpec } from './openapi.js';
import { koaPath } from './openapi-paths.js';

/**
 * Declares an operation and routes it in one statement, so the document cannot forget a
 * route. `spec.path` is relative to the router's prefix, like the route itself; the document
 * gets the full path.
 */
export function route(
  router: Router<any, any>,
  document: ApiDocument,
  spec: OperationSpec,
  ...middleware: Middleware<any, any>[]
): void {
  if (middleware.length === 0) throw new Error(`route ${spec.method.toUpperCase()} ${spec.path} has no handler`);
  const prefix = typeof router.opts.prefix === 'string' ? router.opts.prefix : '';
  document.operation({ ...spec, path: prefix + spec.path });
  (router[spec.method] as (path: string, ...mw: Middleware<any, any>[]) => unknown).call(
    router,
    koaPath(spec.path),
    ...middleware,
  );
}

/** `GET /openapi.json`: the document, itself documented in it. */
export function openApiRouter(document: ApiDocument): Router {
  const router = new Router();
  router.get('/openapi.json', (ctx) => {
    ctx.body = document.toJSON();
  });
  document.operation({
    method: 'get',
    path: '/openapi.json',
    summary: 'This API\'s OpenAPI 3.1 document',
    operationId: 'getOpenApiDocument',
    tags: ['operations'],
    open: true,
    responses: {
      200: {
        description: 'The OpenAPI document',
        schema: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.record(z.string(), z.unknown()) }),
        example: { openapi: '3.1.0', info: { title: 'Baton stream node', version: '1' }, paths: {} },
      },
    },
  });
  return router;
}
