import Router from '@koa/router';
import test from 'ava';
import { z } from 'zod';
import { ApiDocument } from '@baton/http/internal/openapi.js';
import {
  assertRoutesDocumented,
  responseRecorder,
  routeDocumentationGaps,
  undocumentedResponses,
} from '@baton/http/internal/openapi-coverage.js';
import { openApiRouter, route } from '@baton/http/internal/openapi-routes.js';
import { koaPath, openApiPath } from '@baton/http/internal/openapi-paths.js';
import { readValidBody } from '@baton/http/internal/json-body.js';
import { problems } from '@baton/http/internal/problem.js';
import { validate } from '@baton/http/internal/validate.js';
import { call, startApi } from './harness.js';

const appendBody = z.object({
  records: z.array(z.object({ body: z.string() })).min(1),
  producer: z.object({ id: z.string(), seq: z.number().int().nonnegative() }).optional(),
});
const appendResult = z.object({ offsets: z.array(z.number().int()), epoch: z.number().int() });
const streamParam = z.object({ stream: z.string().min(1).max(200) });
const readQuery = z.object({ from: z.coerce.number().int().nonnegative().default(0), limit: z.coerce.number().int().positive().optional() });

function documentedApi() {
  const document = new ApiDocument({ title: 'Stream data API', version: '1.0.0' });
  const router = new Router({ prefix: '/v1' });
  route(
    router,
    document,
    {
      method: 'post',
      path: '/streams/{stream}/records',
      summary: 'Append records',
      operationId: 'appendRecords',
      params: { path: streamParam, headers: [{ name: 'Idempotency-Key', description: 'Retry identity' }] },
      requestBody: appendBody,
      responses: {
        200: { description: 'Appended', schema: appendResult },
        409: 'The stream is moving; the body names the owner-to-be',
        503: { description: 'Mid-handoff', headers: { 'Retry-After': { description: 'Seconds to wait' } } },
      },
    },
    async (ctx) => {
      const input = await readValidBody(ctx, appendBody);
      if (ctx.params.stream === 'moving') throw problems.conflict('moving', { owner: 'n2' });
      ctx.body = { offsets: input.records.map((_r, i) => i), epoch: 1 };
    },
  );
  route(
    router,
    document,
    {
      method: 'get',
      path: '/streams/{stream}/records',
      summary: 'Read records',
      params: { path: streamParam, query: readQuery },
      responses: { 200: 'Records from the offset on' },
    },
    (ctx) => {
      const query = validate(readQuery, ctx.query, 'query');
      ctx.body = { from: query.from };
    },
  );
  route(
    router,
    document,
    { method: 'delete', path: '/transfers/{stream}', summary: 'Cancel', scope: 'admin:write', params: { path: streamParam }, responses: { 204: 'Cancelled', 404: 'No transfer' } },
    (ctx) => {
      ctx.status = 204;
    },
  );
  return { document, router };
}

test('path templates convert both ways', (t) => {
  t.is(openApiPath('/v1/streams/:stream/records'), '/v1/streams/{stream}/records');
  t.is(koaPath('/availability/v1/transfers/{authority}'), '/availability/v1/transfers/:authority');
});

test('the document is OpenAPI 3.1 with zod-derived schemas, parameters, security and problem answers', (t) => {
  const { document } = documentedApi();
  const doc = document.toJSON() as any;
  t.is(doc.openapi, '3.1.0');
  const append = doc.paths['/v1/streams/{stream}/records'].post;
  t.is(append.operationId, 'appendRecords');
  t.deepEqual(append.parameters[0], {
    name: 'stream',
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 200 },
  });
  t.like(append.parameters[1], { name: 'Idempotency-Key', in: 'header', required: false });
  const bodySchema = append.requestBody.content['application/json'].schema;
  t.deepEqual(bodySchema.required, ['records']);
  t.is(bodySchema.$schema, undefined);
  t.deepEqual(Object.keys(append.responses).sort(), ['200', '400', '409', '413', '415', '503']);
  t.deepEqual(append.responses['200'].content['application/json'].schema.required, ['offsets', 'epoch']);
  t.deepEqual(append.responses['409'].content['application/problem+json'].schema, { $ref: '#/components/schemas/Problem' });
  t.deepEqual(Object.keys(append.responses['503'].headers), ['Retry-After']);
  const read = doc.paths['/v1/streams/{stream}/records'].get;
  t.deepEqual(
    read.parameters.map((p: any) => [p.name, p.in, p.required]),
    [
      ['stream', 'path', true],
      ['from', 'query', false],
      ['limit', 'query', false],
    ],
  );
  const cancel = doc.paths['/v1/transfers/{stream}'].delete;
  t.deepEqual(cancel.security, [{ bearer: ['admin:write'] }]);
  t.deepEqual(Object.keys(cancel.responses).sort(), ['204', '401', '403', '404']);
  t.is(cancel.responses['204'].content, undefined);
  t.deepEqual(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' });
});

test('declaration mistakes are refused at once', (t) => {
  const document = new ApiDocument({ title: 't', version: '1' });
  document.operation({ method: 'get', path: '/a', summary: 'a', operationId: 'a', responses: { 200: 'ok' } });
  t.throws(() => document.operation({ method: 'get', path: '/a', summary: 'again', responses: { 200: 'ok' } }), {
    message: /GET \/a is declared twice/,
  });
  t.throws(() => document.operation({ method: 'post', path: '/b', summary: 'b', operationId: 'a', responses: { 200: 'ok' } }), {
    message: /operationId a is used twice/,
  });
  t.throws(() => document.operation({ method: 'get', path: '/c/{id}', summary: 'c', responses: { 200: 'ok' } }), {
    message: /path parameter \{id\} without a schema/,
  });
  t.throws(
    () =>
      document.operation({
        method: 'get',
        path: '/d',
        summary: 'd',
        params: { path: z.object({ id: z.string() }) },
        responses: { 200: 'ok' },
      }),
    { message: /declares path parameter id not in its path/ },
  );
  t.throws(() => document.operation({ method: 'get', path: '/e', summary: 'e', responses: {} }), { message: /no response/ });
  t.throws(() => document.operation({ method: 'get', path: '/f', summary: 'f', responses: { 1000: 'x' } }), {
    message: /not an HTTP status/,
  });
});

test('assertRoutesDocumented passes when routes and document agree, including the /openapi.json route', (t) => {
  const { document, router } = documentedApi();
  const docs = openApiRouter(document);
  t.notThrows(() => assertRoutesDocumented([router, docs], document));
});

test('a routed but undocumented operation is reported', (t) => {
  const { document, router } = documentedApi();
  router.get('/streams/:stream', (ctx) => {
    ctx.body = {};
  });
  router.put('/streams/:stream/records', (ctx) => {
    ctx.status = 204;
  });
  t.deepEqual(routeDocumentationGaps(router, document), [
    'routed but not documented: GET /v1/streams/{stream}',
    'routed but not documented: PUT /v1/streams/{stream}/records',
  ]);
  const error = t.throws(() => assertRoutesDocumented(router, document));
  t.regex(error!.message, /routed but not documented: GET \/v1\/streams\/\{stream\}/);
});

test('a documented but unrouted operation is reported', (t) => {
  const { document, router } = documentedApi();
  document.operation({ method: 'get', path: '/v1/admin/nodes', summary: 'List nodes', responses: { 200: 'ok' } });
  t.deepEqual(routeDocumentationGaps(router, document), ['documented but not routed: GET /v1/admin/nodes']);
});

test('nested routers are checked with their mount prefix; wildcard routes are flagged', (t) => {
  const document = new ApiDocument({ title: 't', version: '1' });
  const inner = new Router();
  inner.get('/nodes/:node', (ctx) => {
    ctx.body = {};
  });
  const outer = new Router();
  outer.use('/v1/admin', inner.routes());
  document.operation({
    method: 'get',
    path: '/v1/admin/nodes/{node}',
    summary: 'n',
    params: { path: z.object({ node: z.string() }) },
    responses: { 200: 'ok' },
  });
  t.deepEqual(routeDocumentationGaps(outer, document), []);
  outer.get('/files/*path', (ctx) => {
    ctx.body = {};
  });
  t.deepEqual(routeDocumentationGaps(outer, document), ['routed but not expressible in OpenAPI: GET /files/*path']);
});

test('/openapi.json serves the document over HTTP', async (t) => {
  const { document, router } = documentedApi();
  const api = await startApi([router, openApiRouter(document)]);
  t.teardown(api.stop);
  const res = await call(`${api.url}/openapi.json`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type')!, /application\/json/);
  t.is(res.body.openapi, '3.1.0');
  t.truthy(res.body.paths['/openapi.json'].get);
  t.truthy(res.body.paths['/v1/streams/{stream}/records'].post);
});

test('responseRecorder + undocumentedResponses catch a status the document does not declare', async (t) => {
  const { document, router } = documentedApi();
  const recorder = responseRecorder();
  const api = await startApi(router, { outer: [recorder.middleware] });
  t.teardown(api.stop);
  const post = (stream: string, body: string) =>
    call(`${api.url}/v1/streams/${stream}/records`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
  t.is((await post('s1', '{"records":[{"body":"a"}]}')).status, 200);
  t.is((await post('moving', '{"records":[{"body":"a"}]}')).status, 409);
  t.is((await post('s1', '{"records":[]}')).status, 400);
  t.is((await call(`${api.url}/v1/streams/s1/records?from=-1`)).status, 400);
  t.is((await call(`${api.url}/v1/transfers/s1`, { method: 'DELETE' })).status, 204);
  t.deepEqual(recorder.answered.map((a) => a.path).slice(0, 2), ['/v1/streams/{stream}/records', '/v1/streams/{stream}/records']);
  // 400 on the GET is not declared: the check names exactly that answer.
  t.deepEqual(undocumentedResponses(recorder.answered, document), ['GET /v1/streams/{stream}/records -> 400']);
});

test('a recursive zod schema is refused rather than published with a dangling $ref', (t) => {
  interface Tree {
    children: Tree[];
  }
  const tree: z.ZodType<Tree> = z.object({ children: z.array(z.lazy(() => tree)) });
  const document = new ApiDocument({ title: 't', version: '1' });
  t.throws(() => document.operation({ method: 'post', path: '/t', summary: 't', requestBody: tree, responses: { 200: 'ok' } }), {
    message: /recursive/,
  });
});
