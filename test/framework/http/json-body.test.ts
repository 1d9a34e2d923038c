import { request } from 'node:http';
import Router from '@koa/router';
import test from 'ava';
import { z } from 'zod';
import { readJsonBody, readValidBody } from '@baton/http/internal/json-body.js';
import { validate } from '@baton/http/internal/validate.js';
import { HttpProblem } from '@baton/http/internal/problem.js';
import { call, startApi } from './harness.js';

const recordsSchema = z.object({ records: z.array(z.object({ body: z.string() })).min(1) });

function bodyRouter(): Router {
  const router = new Router();
  router.post('/echo', async (ctx) => {
    const first = await readJsonBody(ctx, { limitBytes: 64 });
    const second = await readJsonBody(ctx, { limitBytes: 64 });
    ctx.body = { value: first, same: first === second };
  });
  router.post('/optional', async (ctx) => {
    const value = await readJsonBody(ctx, { optional: true });
    ctx.body = { empty: value === undefined };
  });
  router.post('/records', async (ctx) => {
    const input = await readValidBody(ctx, recordsSchema);
    ctx.body = { count: input.records.length };
  });
  return router;
}

const json = (body: string): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body,
});

test('a JSON body is parsed, and reading it twice yields the same value', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/echo`, json('{"a":[1,2]}'));
  t.is(res.status, 200);
  t.deepEqual(res.body, { value: { a: [1, 2] }, same: true });
});

test('a +json media type is accepted', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/echo`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/merge-patch+json; charset=utf-8' },
    body: '{"a":1}',
  });
  t.is(res.status, 200);
  t.deepEqual(res.body.value, { a: 1 });
});

test('malformed JSON answers 400 malformed-json, never 500', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/echo`, json('{"a": '));
  t.is(res.status, 400);
  t.is(res.body.type, 'urn:baton:problem:malformed-json');
  t.regex(res.body.detail, /not valid JSON/);
});

test('a body over the limit with Content-Length answers 413 and closes the connection', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/echo`, json(JSON.stringify({ pad: 'x'.repeat(100) })));
  t.is(res.status, 413);
  t.is(res.body.limit_bytes, 64);
  t.is(res.headers.get('connection'), 'close');
});

test('a chunked body that grows past the limit answers 413', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const { status, body } = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(`${api.url}/echo`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    // No Content-Length: Node sends it chunked, so only counting while reading can catch it.
    req.write('{"pad":"');
    req.write('y'.repeat(100));
    req.end('"}');
  });
  t.is(status, 413);
  t.is(body.type, 'urn:baton:problem:body-too-large');
});

test('a non-JSON content type answers 415', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/echo`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'hi' });
  t.is(res.status, 415);
  t.regex(res.body.detail, /text\/plain/);
});

test('a compressed body answers 415 rather than being misread', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/echo`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    body: '{}',
  });
  t.is(res.status, 415);
  t.regex(res.body.detail, /gzip/);
});

test('an empty body answers 400 unless the body is optional', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const required = await call(`${api.url}/echo`, { method: 'POST' });
  t.is(required.status, 400);
  t.regex(required.body.detail, /empty/);
  const optional = await call(`${api.url}/optional`, { method: 'POST' });
  t.is(optional.status, 200);
  t.true(optional.body.empty);
});

test('invalid UTF-8 answers 400', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/echo`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: new Uint8Array([0x22, 0xff, 0xfe, 0x22]),
  });
  t.is(res.status, 400);
  t.regex(res.body.detail, /UTF-8/);
});

test('readValidBody answers 400 listing the invalid fields', async (t) => {
  const api = await startApi(bodyRouter());
  t.teardown(api.stop);
  const ok = await call(`${api.url}/records`, json('{"records":[{"body":"a"},{"body":"b"}]}'));
  t.deepEqual(ok.body, { count: 2 });
  const bad = await call(`${api.url}/records`, json('{"records":[{"body":1},{}]}'));
  t.is(bad.status, 400);
  t.deepEqual(
    bad.body.invalid_fields.map((f: { path: string }) => f.path),
    ['records.0.body', 'records.1.body'],
  );
  t.regex(bad.body.detail, /^invalid request body: records\.0\.body/);
});

test('validate returns the parsed value or raises a 400 HttpProblem naming the input', (t) => {
  const schema = z.object({ limit: z.coerce.number().int().positive() });
  t.deepEqual(validate(schema, { limit: '5' }, 'query'), { limit: 5 });
  const error = t.throws(() => validate(schema, { limit: '-1' }, 'query'), { instanceOf: HttpProblem });
  t.is(error!.status, 400);
  t.regex(error!.detail, /^invalid query: limit: /);
  t.deepEqual((error!.extra.invalid_fields as { path: string }[]).map((f) => f.path), ['limit']);
});
