import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { buildInfo } from './build-info.js';
import { definePlugin } from '@baton/kernel';
import { TRACING, type Tracing } from './tracing.js';

/**
 * A host's `tracing` section. Absent, tracing is off: no span is made and no `traceparent` read
 * or sent. With `otlp`, spans go to an OpenTelemetry collector over OTLP/HTTP (JSON).
 */
export const tracingOptions = z
  .object({
    otlp: z
      .object({
        url: z.url().describe('The collector\'s traces endpoint, e.g. http://127.0.0.1:4318/v1/traces'),
        headers: z.record(z.string(), z.string()).optional().describe('Sent with every export (an API key...)'),
      })
      .strict(),
    serviceName: z.string().min(1).default('baton').describe('service.name of every span (service.instance.id is the member id)'),
    sampleRatio: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe("Share of the traces this member starts that are kept; a caller's traceparent decides for its own"),
  })
  .strict()
  .describe('OpenTelemetry traces over OTLP/HTTP: server spans of the API and control routes, traceparent on peer calls; off when absent');

export type TracingOptions = z.output<typeof tracingOptions>;

let contextManagerSet = false;

/**
 * Spans follow a request through awaits and timers only with a context manager; one per
 * process, set once by the first member that traces (it is global to the OpenTelemetry API).
 */
function ensureContextManager(): void {
  if (contextManagerSet) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerSet = true;
}

/** One member's tracer provider: its own resource and exporter, shut down (flushed) with its host. */
export class MemberTracing implements Tracing {
  readonly enabled = true;
  readonly tracer: Tracer;
  private readonly provider: BasicTracerProvider;

  constructor(
    readonly member: string,
    options: { exporter: SpanExporter; serviceName?: string; sampleRatio?: number; batch?: boolean },
  ) {
    ensureContextManager();
    const build = buildInfo();
    const processor = options.batch ? new BatchSpanProcessor(options.exporter) : new SimpleSpanProcessor(options.exporter);
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        'service.name': options.serviceName ?? 'baton',
        'service.instance.id': member,
        'service.version': build.version,
        'baton.build': build.build,
      }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio ?? 1) }),
      spanProcessors: [processor],
    });
    this.tracer = this.provider.getTracer('baton', build.version);
  }

  /** Exports what is still buffered. */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  async stop(): Promise<void> {
    await this.provider.shutdown();
  }
}

/**
 * Provides TRACING for a host whose config has a `tracing` section; a host without one leaves
 * TRACING unprovided and every component runs untraced.
 */
export const tracingPlugin = definePlugin({
  id: 'tracing',
  description: 'OpenTelemetry traces of the admin, control and peer routes, exported over OTLP/HTTP.',
  provides: [TRACING],
  options: tracingOptions.extend({ member: z.string().min(1) }),
  register: (ctx) =>
    ctx.provide(TRACING, {
      useFactory: () =>
        new MemberTracing(ctx.options.member, {
          exporter: new OTLPTraceExporter({ url: ctx.options.otlp.url, headers: ctx.options.otlp.headers }),
          serviceName: ctx.options.serviceName,
          sampleRatio: ctx.options.sampleRatio,
          batch: true,
        }),
    }),
});
