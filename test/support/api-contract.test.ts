import test from 'ava';
import { z } from 'zod';
import { ApiDocument } from '@baton/http/internal/openapi.js';
import { ApiContract } from './api-contract.js';

function contract(): ApiContract {
  const document = new ApiDocument({ title: 't', version: '1' });
  document.problemExtensions({ owner: z.string() });
  document.operation({
    method: 'get',
    path: '/v1/streams/{stream}',
    summary: 's',
    operationId: 'describeStream',
    tags: ['data'],
    scope: 'read',
    params: { path: z.object({ stream: z.string() }) },
    responses: { 200: { description: 'ok', schema: z.object({ stream: z.string(), epoch: z.number().int() }) }, 409: 'elsewhere' },
  });
  document.operation({
    method: 'get',
    path: '/v1/streams/all',
    summary: 'a',
    operationId: 'allStreams',
    tags: ['data'],
    open: true,
    responses: { 200: { description: 'ok', contentType: 'text/plain', schema: z.string() } },
  });
  return new ApiContract(document.toJSON() as ConstructorParameters<typeof ApiContract>[0]);
}

const json = (body: unknown) => ({ contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) });
const problem = (body: unknown) => ({ contentType: 'application/problem+json', body: JSON.stringify(body) });

test('an answer that keeps the contract passes, problems included', (t) => {
  const c = contract();
  t.deepEqual(c.check('GET', '/v1/streams/orders', { status: 200, ...json({ stream: 'orders', epoch: 2 }) }), []);
  t.deepEqual(c.check('GET', '/v1/streams/orders', { status: 409, ...problem({ type: 'urn:baton:problem:not-owner', title: 'Conflict', status: 409, detail: 'd', owner: 'n2', other: 1 }) }), []);
  t.deepEqual(c.check('HEAD', '/v1/streams/orders', { status: 200, contentType: null, body: '' }), [], 'HEAD has no body to check');
});

test('a body off its schema, an undeclared status or media type, and a body that is not JSON are each named', (t) => {
  const c = contract();
  t.deepEqual(c.check('GET', '/v1/streams/orders', { status: 200, ...json({ stream: 'orders', epoch: 'two' }) }), [
    'GET /v1/streams/{stream} -> 200: body/epoch must be integer ({"type":"integer"})',
  ]);
  // The shared Problem is reached through the document's own $ref: its members are checked too.
  t.deepEqual(c.check('GET', '/v1/streams/orders', { status: 409, ...problem({ type: 'x', title: 'Conflict', status: 409, detail: 'd', owner: 7 }) }), [
    'GET /v1/streams/{stream} -> 409: body/owner must be string ({"type":"string"})',
  ]);
  t.regex(c.check('GET', '/v1/streams/orders', { status: 409, ...problem({ title: 'Conflict' }) }).join('\n'), /must have required property 'type'/);
  t.deepEqual(c.check('GET', '/v1/streams/orders', { status: 500, ...problem({}) }), [
    'GET /v1/streams/{stream} -> 500: status not declared (declared: 200, 401, 403, 409)',
  ]);
  t.deepEqual(c.check('GET', '/v1/streams/orders', { status: 200, contentType: 'text/html', body: '<p>' }), [
    'GET /v1/streams/{stream} -> 200: content type "text/html" not declared (declared: application/json)',
  ]);
  t.deepEqual(c.check('GET', '/v1/streams/orders', { status: 200, contentType: 'application/json', body: '{' }), [
    'GET /v1/streams/{stream} -> 200: the application/json body is not JSON: {',
  ]);
});

test('a literal path is matched before a template that also fits it; an unknown path is not checked', (t) => {
  const c = contract();
  t.is(c.operationOf('GET', '/v1/streams/all')?.name, 'GET /v1/streams/all');
  t.is(c.operationOf('GET', '/v1/streams/orders')?.name, 'GET /v1/streams/{stream}');
  t.deepEqual(c.check('GET', '/v1/streams/all', { status: 200, contentType: 'text/plain; charset=utf-8', body: 'orders' }), []);
  t.is(c.operationOf('POST', '/v1/streams/orders'), undefined);
  t.deepEqual(c.check('GET', '/v1/nothing/here', { status: 404, ...problem({}) }), []);
});
