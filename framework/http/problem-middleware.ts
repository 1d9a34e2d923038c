import type { Context, Middleware } from 'koa';
import type { Logger } from '@baton/contracts';
import { HttpProblem, PROBLEM_CONTENT_TYPE } from './problem.js';
import { defaultProblemMappers, toProblem, type ProblemMapper } from './problem-mapping.js';
import { peekState } from './state.js';

export interface ProblemHandlingOptions {
  /** Tried before the defaults, in order: a variant's own meanings for contract errors. */
  mappers?: readonly ProblemMapper[];
  /** Where unexpected errors are logged when the request has no logger of its own yet. */
  logger: Logger;
}

/**
 * The outermost middleware of every Baton API: whatever goes wrong below it leaves as an
 * `application/problem+json` body (RFC 9457). Thrown HttpProblems and known contract errors
 * get their mapped status; a status-only answer (no route, wrong method) gets a body; anything
 * unexpected becomes a 500 whose detail carries only the request id, while the stack goes to
 * the log. A client's mistake is never a 500: every input error has a mapper.
 */
export function problemHandling(options: ProblemHandlingOptions): Middleware {
  const mappers = [...(options.mappers ?? []), ...defaultProblemMappers];
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const log = peekState(ctx, 'log') ?? options.logger;
      if (ctx.headerSent || !ctx.writable) {
        // A client that went away mid-request is routine: no stack, no error level.
        if (!ctx.writable || ctx.req.destroyed) log.debug({ err: (error as Error).message }, 'client went away before the answer; the connection is cut');
        else log.error({ err: error }, 'request failed after the response started; the connection is cut');
        ctx.req.socket.destroy();
        return;
      }
      const problem = toProblem(error, mappers);
      if (problem) {
        // 503 is the routine "retry after" answer (frozen, no leader, store down): said once per
        // request without a stack, so a busy member's log is not flooded; other 5xx carry it.
        if (problem.status === 503) log.info({ status: problem.status, type: problem.type }, problem.detail);
        else if (problem.status >= 500) log.warn({ err: error, status: problem.status }, problem.detail);
        else log.debug({ status: problem.status, type: problem.type }, problem.detail);
        writeProblem(ctx, problem);
      } else {
        log.error({ err: error }, 'unexpected error while handling the request');
        writeProblem(ctx, unexpected(ctx));
      }
      return;
    }
    if (ctx.status >= 400 && ctx.body == null) writeProblem(ctx, statusOnly(ctx));
  };
}

/** Writes the problem as the response: status, its headers, the problem+json body. */
export function writeProblem(ctx: Context, problem: HttpProblem): void {
  ctx.status = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  ctx.type = PROBLEM_CONTENT_TYPE;
  const requestId = peekState(ctx, 'requestId');
  ctx.body = {
    ...problem.body(ctx.path),
    ...(requestId === undefined ? {} : { request_id: requestId }),
  };
}

function unexpected(ctx: Context): HttpProblem {
  const requestId = peekState(ctx, 'requestId');
  const reference = requestId === undefined ? '' : `; quote request id ${requestId} when reporting it`;
  return new HttpProblem({
    status: 500,
    type: 'internal',
    detail: `the server failed to handle this request${reference}`,
  });
}

/** A status set without a body, by the router (404, 405, 501) or by a handler. */
function statusOnly(ctx: Context): HttpProblem {
  const target = `${ctx.method} ${ctx.path}`;
  switch (ctx.status) {
    case 404:
      return new HttpProblem({ status: 404, type: 'not-found', detail: `nothing is served at ${target}` });
    case 405: {
      const allow = String(ctx.response.get('Allow') ?? '');
      return new HttpProblem({
        status: 405,
        type: 'method-not-allowed',
        detail: `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow || 'none'}`,
        extra: { allowed: allow ? allow.split(/,\s*/) : [] },
      });
    }
    case 501:
      return new HttpProblem({
        status: 501,
        type: 'not-implemented',
        detail: `method ${ctx.method} is not supported by this server`,
      });
    default:
      return new HttpProblem({ status: ctx.status, detail: `${target} answered ${ctx.status}` });
  }
}
