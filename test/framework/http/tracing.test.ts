import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import test from 'ava';
import Koa from 'koa';
import { childSpan, serverSpans, traceHeaders, TRACING_OFF } from '@baton/http/internal/tracing.js';
import { MemberTracing } from '@baton/http/internal/tracing-plugin.js';

async function serve(app: Koa): Promise<{ url: string; close: () => Promise<void> }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('outside a traced request no span is made and no traceparent sent', async (t) => {
  t.deepEqual(traceHeaders(), {});
  t.is(await childSpan('work', {}, async () => 42), 42);
});

test('tracing off: a request with a traceparent passes through untouched, and its peer calls carry none', async (t) => {
  const app = new Koa();
  let seen: Record<string, string> | undefined;
  app.use(serverSpans(TRACING_OFF, 'test'));
  app.use(async (ctx) => {
    seen = await childSpan('peer call', {}, async () => traceHeaders());
    ctx.body = 'ok';
  });
  const server = await serve(app);
  t.teardown(server.close);
  await fetch(`${server.url}/v1/admin/x`, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
  t.deepEqual(seen, {});
});

test('tracing on: a server span per request, a child for a peer call whose traceparent names it; probes are untraced', async (t) => {
  const exporter = new InMemorySpanExporter();
  const tracing = new MemberTracing('m1', { exporter });
  t.teardown(() => tracing.stop());
  const app = new Koa();
  let sent: Record<string, string> = {};
  app.use(serverSpans(tracing, 'test'));
  app.use(async (ctx) => {
    const headers = await childSpan('peer call', { 'baton.peer': 'm2' }, async () => traceHeaders());
    if (ctx.path !== '/readyz') sent = headers;
    ctx.body = 'ok';
  });
  const server = await serve(app);
  t.teardown(server.close);
  await fetch(`${server.url}/v1/admin/x`);
  await fetch(`${server.url}/readyz`);
  const spans = exporter.getFinishedSpans();
  // The probe made neither a server span nor a child one.
  t.deepEqual(spans.map((s) => s.name).sort(), ['GET', 'peer call']);
  const root = spans.find((s) => s.name === 'GET')!;
  const child = spans.find((s) => s.name === 'peer call')!;
  t.is(root.parentSpanContext, undefined, 'a request without a traceparent starts a trace');
  t.is(child.parentSpanContext?.spanId, root.spanContext().spanId);
  t.is(sent.traceparent, `00-${child.spanContext().traceId}-${child.spanContext().spanId}-01`);
  t.is(root.resource.attributes['service.instance.id'], 'm1');
});

test('a stream node whose config has a tracing section exports its spans over OTLP/HTTP to the collector named there', async (t) => {
  const { createServer } = await import('node:http');
  const { startStreamNode } = await import('@baton/host-stream-node/internal/host.js');
  const received: { path: string; type: string | undefined; body: string }[] = [];
  const collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', type: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => collector.close(() => resolve())));
  const url = `http://127.0.0.1:${(collector.address() as { port: number }).port}/v1/traces`;
  const token = 'tracing-admin';
  const { host, node } = await startStreamNode({
    node: { self: 'n1', http: { port: 0 }, wal: { kind: 'memory' }, tokens: [{ token, principal: 'ops', scopes: ['admin'] }] },
    dataDir: null,
    log: { level: 'silent' },
    tracing: { otlp: { url }, serviceName: 'baton-test' },
  });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : host.stop()));
  const response = await fetch(`${node.url}/v1/admin/nodes`, { headers: { authorization: `Bearer ${token}` } });
  t.is(response.status, 200);
  // Stopping the host shuts its tracer provider down, which exports what is batched.
  await host.stop();
  stopped = true;
  const exported = received.filter((r) => r.path === '/v1/traces');
  t.true(exported.length > 0, 'the collector received an export');
  const text = exported.map((r) => r.body).join('\n');
  t.regex(text, /GET \/v1\/admin\/nodes/);
  t.regex(text, /baton-test/);
  t.regex(text, /"service\.instance\.id"[^}]*"n1"/);
});
