import type { Middleware } from 'koa';
import type { Clock, Logger, Rng } from '@baton/contracts';
import { setState } from './state.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * What a caller's request id may look like to be adopted: short, and only characters that are
 * safe in a header, a log line and a URL. Anything else is replaced rather than echoed, so a
 * client cannot inject into logs or responses through it.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface RequestContextOptions {
  rng: Rng;
  clock: Clock;
  logger: Logger;
}

/**
 * Gives every request an id (the caller's X-Request-Id when sane, else a minted one), echoes
 * it in the response header, and binds a child logger to it, so one grep finds everything a
 * request caused. Logs each completed request at debug level with its status and duration.
 */
export function requestContext(options: RequestContextOptions): Middleware {
  return async (ctx, next) => {
    const offered = ctx.get(REQUEST_ID_HEADER);
    const requestId = SANE_REQUEST_ID.test(offered) ? offered : options.rng.hex(12);
    const log = options.logger.child({ request_id: requestId });
    setState(ctx, 'requestId', requestId);
    setState(ctx, 'log', log);
    ctx.set(REQUEST_ID_HEADER, requestId);
    // Every answer is JSON (or the dashboard's own files): no browser may guess another type.
    ctx.set('X-Content-Type-Options', 'nosniff');
    const started = options.clock.now();
    try {
      await next();
    } finally {
      log.debug(
        { method: ctx.method, path: ctx.path, status: ctx.status, duration_ms: options.clock.now() - started },
        'request completed',
      );
    }
  };
}
