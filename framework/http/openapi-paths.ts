/** koa-router path (`/v1/streams/:stream`) to an OpenAPI path template (`/v1/streams/{stream}`). */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z_$][A-Za-z0-9_$]*)/g, '{$1}');
}

/** OpenAPI path template to the koa-router path that serves it. */
export function koaPath(openApiTemplate: string): string {
  return openApiTemplate.replace(/\{([A-Za-z_$][A-Za-z0-9_$]*)\}/g, ':$1');
}

/** The parameter names of an OpenAPI path template, in order. */
export function templateParams(openApiTemplate: string): string[] {
  return [...openApiTemplate.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
}

/**
 * True when the koa path uses only plain segments and `:name` parameters, i.e. it has an exact
 * OpenAPI equivalent. Wildcards and optional groups do not, and cannot be documented.
 */
export function isDocumentableKoaPath(path: string): boolean {
  return !/[*{}()?+]/.test(path.replace(/:([A-Za-z_$][A-Za-z0-9_$]*)/g, ''));
}
