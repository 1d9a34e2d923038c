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
      tags: ['data'],
      scope: 'stream:append',
      params: { path: streamParam, headers: [{ name: 'Idempotency-Key', description: 'Retry identity' }] },
      requestBody: appendBody,
      requestExample: { records: [{ body: 'a' }] },
      responses: {
        200: { description: 'Appended', schema: appendResult, example: { offsets: [0], epoch: 1 } },
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
      operationId: 'readRecords',
      tags: ['data'],
      open: true,
      params: { path: streamParam, query: readQuery },
      responses: { 200: { description: 'Records from the offset on', schema: z.object({ from: z.number() }) } },
    },
    (ctx) => {
      const query = validate(readQuery, ctx.query, 'query');
      ctx.body = { from: query.from };
    },
  );
  route(
    router,
    document,
    {
      method: 'delete',
      path: '/transfers/{stream}',
      summary: 'Cancel',
      operationId: 'cancelTransfer',
      tags: ['admin'],
      scope: 'admin:write',
      params: { path: streamParam },
      responses: { 204: 'Cancelled', 404: 'No transfer' },
    },
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
  t.deepEqual(Object.keys(append.responses).sort(), ['200', '400', '401', '403', '409', '413', '415', '503']);
  t.deepEqual(append.responses['200'].content['application/json'].schema.required, ['offsets', 'epoch']);
  t.deepEqual(append.responses['200'].content['application/json'].example, { offsets: [0], epoch: 1 });
  t.deepEqual(append.requestBody.content['application/json'].example, { records: [{ body: 'a' }] });
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
  // Open: no credential, and the 401 every listener gives a token it does not know.
  t.deepEqual(read.security, []);
  t.deepEqual(Object.keys(read.responses).sort(), ['200', '401']);
  const cancel = doc.paths['/v1/transfers/{stream}'].delete;
  t.deepEqual(cancel.security, [{ bearer: ['admin:write'] }]);
  t.deepEqual(Object.keys(cancel.responses).sort(), ['204', '401', '403', '404']);
  t.is(cancel.responses['204'].content, undefined);
  t.like(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' });
  // Only the schemes some operation uses.
  t.deepEqual(Object.keys(doc.components.securitySchemes), ['bearer']);
  t.deepEqual(doc.tags, [{ name: 'admin' }, { name: 'data' }]);
  t.deepEqual(doc.servers, [{ url: '/', description: 'The listener serving this document' }]);
});

test('the one Problem component lists the shared extension members and those a router adds', (t) => {
  const document = new ApiDocument({ title: 't', version: '1' });
  document.operation({ method: 'get', path: '/a', summary: 'a', operationId: 'a', tags: ['t'], open: true, responses: { 404: 'missing' } });
  document.problemExtensions({ owner: z.string() });
  const problem = (document.toJSON() as any).components.schemas.Problem;
  t.deepEqual(problem.required, ['type', 'title', 'status', 'detail']);
  t.like(problem.properties, { invalid_fields: { type: 'array' }, request_id: { type: 'string' }, owner: { type: 'string' } });
  t.deepEqual(problem.additionalProperties, {});
  t.notThrows(() => document.problemExtensions({ owner: z.string() }));
  t.throws(() => document.problemExtensions({ owner: z.number() }), { message: /owner is declared twice with different schemas/ });
});

test('declaration mistakes are refused at once', (t) => {
  const document = new ApiDocument({ title: 't', version: '1' });
  const base = { tags: ['t'], open: true as const, responses: { 204: 'ok' } };
  document.operation({ ...base, method: 'get', path: '/a', summary: 'a', operationId: 'a' });
  t.throws(() => document.operation({ ...base, method: 'get', path: '/a', summary: 'again', operationId: 'again' }), {
    message: /GET \/a is declared twice/,
  });
  t.throws(() => document.operation({ ...base, method: 'post', path: '/b', summary: 'b', operationId: 'a' }), {
    message: /operationId a is used twice/,
  });
  t.throws(() => document.operation({ ...base, method: 'get', path: '/c/{id}', summary: 'c', operationId: 'c' }), {
    message: /path parameter \{id\} without a schema/,
  });
  t.throws(
    () => document.operation({ ...base, method: 'get', path: '/d', summary: 'd', operationId: 'd', params: { path: z.object({ id: z.string() }) } }),
    { message: /declares path parameter id not in its path/ },
  );
  // No operation is only described: each 2xx body has a schema, its security is named, an id and a tag given.
  t.throws(() => document.operation({ ...base, method: 'get', path: '/e', summary: 'e', operationId: 'e', responses: { 200: 'a body' } }), {
    message: /answers 200 with a body but declares no schema/,
  });
  t.throws(() => document.operation({ method: 'get', path: '/g', summary: 'g', operationId: 'g', tags: ['t'], responses: { 204: 'ok' } }), {
    message: /must name exactly one of scope, peer or open/,
  });
  t.throws(() => document.operation({ ...base, method: 'get', path: '/h', summary: 'h', operationId: 'h', scope: 'admin' }), {
    message: /must name exactly one of scope, peer or open/,
  });
  t.throws(() => document.operation({ ...base, method: 'get', path: '/i', summary: 'i', operationId: '' }), { message: /needs an operationId/ });
  t.throws(() => document.operation({ ...base, method: 'get', path: '/j', summary: 'j', operationId: 'j', tags: [] }), { message: /at least one tag/ });
  t.throws(() => document.operation({ method: 'get', path: '/f', summary: 'f', operationId: 'f', tags: ['t'], scope: 'admin', responses: { 1000: 'x' } }), {
    message: /not an HTTP status/,
  });
  // A refused declaration leaves nothing behind: its id is still free.
  t.notThrows(() => document.operation({ ...base, method: 'get', path: '/e2', summary: 'e', operationId: 'e' }));
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
  document.operation({ method: 'get', path: '/v1/admin/nodes', summary: 'List nodes', operationId: 'listNodes', tags: ['admin'], scope: 'admin', responses: { 204: 'ok' } });
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
    operationId: 'getNode',
    tags: ['admin'],
    scope: 'admin',
    params: { path: z.object({ node: z.string() }) },
    responses: { 204: 'ok' },
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
  t.throws(() => document.operation({ method: 'post', path: '/t', summary: 't', operationId: 't', tags: ['t'], open: true, requestBody: tree, responses: { 204: 'ok' } }), {
    message: /recursive/,
  });
});
