import {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Middleware } from 'koa';
import { token } from '@baton/contracts';
import { routeTemplateOf } from './routes.js';

/**
 * A member's tracing: the OpenTelemetry tracer its spans are made with (one per host, so members
 * sharing a process keep their own resource), or nothing at all when it is off (the default).
 */
export interface Tracing {
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** The member spans are attributed to (`baton.member` on each server span). */
  readonly member: string;
}

export const TRACING = token<Tracing>('Tracing');

/** Off: no span is made, no header read or written, no context kept. */
export const TRACING_OFF: Tracing = Object.freeze({
  enabled: false,
  tracer: new ProxyTracerProvider().getTracer('baton'),
  member: '',
});

/**
 * The member's Tracing travels in the request's context, so a peer call made anywhere below a
 * server span (a forwarded proposal, a feed pull, a report asked of a peer) makes its client span
 * with the right member's tracer without each component being handed one. Work started by no
 * traced request (timers, background loops) has none and makes no spans.
 */
const TRACING_KEY = createContextKey('baton.tracing');
const propagator = new W3CTraceContextPropagator();

/**
 * Routes that get no server span: scrapes, probes, the dashboard's assets, and Raft's own
 * traffic (heartbeats and appends many times a second: a span each would drown the requests that
 * matter). Forwarded proposals (`/internal/raft/v1/requests`) and feed pulls do get one.
 */
const UNTRACED = /^\/(metrics|livez|readyz|openapi\.json|favicon\.ico|ui(\/|$)|internal\/raft\/v1\/(stream|messages)$)/;

/**
 * A server span around every request of the listener except the untraced ones, a child of the
 * caller's `traceparent` when it sends one. Its name is the method and route template
 * (`POST /v1/admin/streams/{stream}/transfer`), never the raw path.
 */
export function serverSpans(tracing: Tracing | undefined, listener: string): Middleware {
  if (!tracing?.enabled) return (_ctx, next) => next();
  return async (ctx, next) => {
    if (UNTRACED.test(ctx.path)) return next();
    const parent = propagator.extract(ROOT_CONTEXT, ctx.headers, defaultTextMapGetter);
    const span = tracing.tracer.startSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': ctx.method, 'baton.member': tracing.member, 'baton.listener': listener },
      },
      parent,
    );
    const active = trace.setSpan(parent, span).setValue(TRACING_KEY, tracing);
    try {
      await context.with(active, next);
    } catch (error) {
      span.recordException(error as Error);
      throw error;
    } finally {
      const route = routeTemplateOf(ctx);
      if (route) {
        span.updateName(`${ctx.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

function activeTracing(active: Context): Tracing | undefined {
  const found = active.getValue(TRACING_KEY) as Tracing | undefined;
  return found?.enabled && trace.getSpan(active) ? found : undefined;
}

/**
 * Runs `work` in a child span of the traced request it is part of (a peer call: CLIENT); runs it
 * as it is, with no span, outside one. Headers for the call are read inside `work` with
 * traceHeaders(), so they name this span.
 */
export async function childSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>, kind: SpanKind = SpanKind.CLIENT): Promise<T> {
  const active = context.active();
  const tracing = activeTracing(active);
  if (!tracing) return work();
  const span: Span = tracing.tracer.startSpan(name, { kind, attributes }, active);
  try {
    return await context.with(trace.setSpan(active, span), work);
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/** The W3C `traceparent` (and `tracestate`) of the active span, for a peer call; none outside a traced request. */
export function traceHeaders(): Record<string, string> {
  const active = context.active();
  if (!activeTracing(active)) return {};
  const carrier: Record<string, string> = {};
  propagator.inject(active, carrier, defaultTextMapSetter);
  return carrier;
}
