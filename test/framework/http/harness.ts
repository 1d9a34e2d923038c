// Shared setup for the HTTP tests: a real koa app with the shared middleware, on port 0.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Logger } from '@baton/contracts/internal/logger.js';
import { createApiApp, type ApiAppOptions } from '@baton/http/internal/api-app.js';
import { createHttpServer, type HttpServer } from '@baton/http/internal/http-server.js';
import { serveRouter } from '@baton/http/internal/routes.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg?: string;
}

/** A logger that keeps every record, with the bindings of its children merged in. */
export function capturingLogger(
  records: LogRecord[] = [],
  bindings: Record<string, unknown> = {},
): Logger & { records: LogRecord[] } {
  const at =
    (level: LogRecord['level']) =>
    (fieldsOrMsg: Record<string, unknown> | string, msg?: string) => {
      if (typeof fieldsOrMsg === 'string') records.push({ level, fields: { ...bindings }, msg: fieldsOrMsg });
      else records.push({ level, fields: { ...bindings, ...fieldsOrMsg }, msg });
    };
  return {
    records,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => capturingLogger(records, { ...bindings, ...more }),
  };
}

export interface Started {
  url: string;
  server: HttpServer;
  logger: ReturnType<typeof capturingLogger>;
  stop(): Promise<void>;
}

/** Starts an app with the shared middleware and the given router(s); stop it in t.teardown. */
export async function startApi(
  routers: Router<any, any> | Router<any, any>[],
  options: Partial<ApiAppOptions> & { before?: Middleware[] } = {},
): Promise<Started> {
  const logger = capturingLogger();
  const clock = new SystemClock();
  const app = createApiApp({ clock, rng: new SeededRng(7), logger, ...options });
  for (const middleware of options.before ?? []) app.use(middleware);
  for (const router of Array.isArray(routers) ? routers : [routers]) app.use(serveRouter(router));
  const server = createHttpServer({ app, port: 0, clock, logger });
  const { url } = await server.listen();
  return { url, server, logger, stop: () => server.stop() };
}

/** fetch, returning the status, headers and parsed JSON body (undefined when empty). */
export async function call(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}
