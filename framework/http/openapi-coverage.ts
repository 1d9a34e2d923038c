import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDocument } from './openapi.js';
import { isDocumentableKoaPath, openApiPath } from './openapi-paths.js';
import { routeTemplateOf } from './routes.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** The `METHOD path` pairs a router serves, as OpenAPI templates. HEAD is GET's shadow. */
export function routedOperations(routers: Router<any, any> | Router<any, any>[]): {
  operations: string[];
  undocumentable: string[];
} {
  const operations = new Set<string>();
  const undocumentable: string[] = [];
  for (const router of Array.isArray(routers) ? routers : [routers]) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use middleware, not a route
      const path = layer.path;
      for (const method of layer.methods) {
        if (method === 'HEAD' && layer.methods.includes('GET')) continue;
        if (typeof path !== 'string' || !isDocumentableKoaPath(path)) {
          undocumentable.push(`${method} ${String(path)}`);
          continue;
        }
        operations.add(`${method} ${openApiPath(path)}`);
      }
    }
  }
  return { operations: [...operations].sort(), undocumentable };
}

function documentedOperations(document: ApiDocument): string[] {
  const paths = (document.toJSON().paths ?? {}) as Record<string, Record<string, unknown>>;
  const out: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) if (item[method]) out.push(`${method.toUpperCase()} ${path}`);
  }
  return out.sort();
}

/**
 * Every gap between what the routers serve and what the document declares, one line each;
 * empty when they agree. Pass every router mounted on the listener the document describes.
 */
export function routeDocumentationGaps(routers: Router<any, any> | Router<any, any>[], document: ApiDocument): string[] {
  const { operations, undocumentable } = routedOperations(routers);
  const documented = documentedOperations(document);
  return [
    ...undocumentable.map((op) => `routed but not expressible in OpenAPI: ${op}`),
    ...operations.filter((op) => !documented.includes(op)).map((op) => `routed but not documented: ${op}`),
    ...documented.filter((op) => !operations.includes(op)).map((op) => `documented but not routed: ${op}`),
  ];
}

/** Throws, listing every gap, unless the routers and the document agree exactly. */
export function assertRoutesDocumented(routers: Router<any, any> | Router<any, any>[], document: ApiDocument): void {
  const gaps = routeDocumentationGaps(routers, document);
  if (gaps.length > 0) {
    throw new Error(`the OpenAPI document and the routes disagree:\n  ${gaps.join('\n  ')}`);
  }
}

/** One answered request, by route template. */
export interface AnsweredRequest {
  method: string;
  path: string;
  status: number;
}

/**
 * A middleware for test apps that records the route template and status of every answered
 * request that matched a route, to check afterwards with `undocumentedResponses` that each
 * status a test provoked is one the document declares. Mount it outside problem handling.
 */
export function responseRecorder(): { middleware: Middleware; answered: AnsweredRequest[] } {
  const answered: AnsweredRequest[] = [];
  const middleware: Middleware = async (ctx, next) => {
    try {
      await next();
    } finally {
      const path = routeTemplateOf(ctx);
      if (path !== undefined) answered.push({ method: ctx.method, path, status: ctx.status });
    }
  };
  return { middleware, answered };
}

/** `METHOD path -> status` for every recorded answer whose status the document does not declare. */
export function undocumentedResponses(answered: readonly AnsweredRequest[], document: ApiDocument): string[] {
  const paths = (document.toJSON().paths ?? {}) as Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  const gaps = new Set<string>();
  for (const { method, path, status } of answered) {
    const lookup = method === 'HEAD' ? 'get' : method.toLowerCase();
    const responses = paths[path]?.[lookup]?.responses ?? {};
    if (!(String(status) in responses)) gaps.add(`${method} ${path} -> ${status}`);
  }
  return [...gaps].sort();
}
