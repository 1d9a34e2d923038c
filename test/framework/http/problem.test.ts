import Router from '@koa/router';
import test from 'ava';
import { z } from 'zod';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { InvalidIdentityError } from '@baton/contracts/internal/identity-supplier.js';
import {
  NotAppendedError,
  OutcomeUnknownError,
} from '@baton/contracts/internal/metadata-consensus.js';
import { HttpProblem, PROBLEM_CONTENT_TYPE, problems } from '@baton/http/internal/problem.js';
import { call, startApi } from './harness.js';

function throwingRouter(): Router {
  const router = new Router();
  router.get('/problem', () => {
    throw problems.conflict(
      'stream s1 is moving to n2',
      { owner: 'n2', address: 'http://n2:7000', epoch: 4 },
      { 'Retry-After': '2' },
    );
  });
  router.get('/store', () => {
    throw new StoreUnavailableError('audit store', 'connection refused');
  });
  router.get('/identity', () => {
    throw new InvalidIdentityError('authority', 'Bad Name', 'npm names are lowercase');
  });
  router.get('/zod', () => {
    z.object({ target: z.string(), limit: z.number() }).parse({ limit: 'x' });
  });
  router.get('/not-appended', () => {
    throw new NotAppendedError('queue_saturated', 'the command queue is full');
  });
  router.get('/key-reused', () => {
    throw new NotAppendedError('key_reused', 'key k1 was used for another command');
  });
  router.get('/outcome-unknown', () => {
    throw new OutcomeUnknownError('leadership_lost', 'the leader stepped down');
  });
  router.get('/koa-throw', (ctx) => ctx.throw(400, 'limit must be positive'));
  router.get('/koa-throw-500', (ctx) => ctx.throw(500, 'database password is hunter2'));
  router.get('/bug', () => {
    throw new TypeError('cannot read properties of undefined (reading "secret")');
  });
  router.post('/only-post', (ctx) => {
    ctx.body = { ok: true };
  });
  router.get('/teapot', (ctx) => {
    ctx.status = 418;
  });
  return router;
}

test('HttpProblem refuses a non-error status and extension members that shadow standard ones', (t) => {
  t.throws(() => new HttpProblem({ status: 200, detail: 'fine' }), { instanceOf: RangeError, message: /400 to 599/ });
  t.throws(() => new HttpProblem({ status: 400, detail: 'x', extra: { status: 1 } }), {
    instanceOf: RangeError,
    message: /"status" clashes/,
  });
  t.throws(() => new HttpProblem({ status: 400, detail: 'x', type: 'Not A Slug' }), { instanceOf: RangeError });
});

test('HttpProblem body follows RFC 9457: slug types become URNs, title defaults to the reason phrase', (t) => {
  const problem = new HttpProblem({ status: 409, type: 'conflict', detail: 'busy', extra: { epoch: 3 } });
  t.deepEqual(problem.body('/v1/x'), {
    type: 'urn:baton:problem:conflict',
    title: 'Conflict',
    status: 409,
    detail: 'busy',
    instance: '/v1/x',
    epoch: 3,
  });
  t.is(new HttpProblem({ status: 404, detail: 'gone' }).type, 'about:blank');
});

test('a thrown HttpProblem is answered as problem+json with its extension members and headers', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/problem`);
  t.is(res.status, 409);
  t.is(res.headers.get('content-type'), PROBLEM_CONTENT_TYPE);
  t.is(res.headers.get('retry-after'), '2');
  t.like(res.body, {
    type: 'urn:baton:problem:conflict',
    title: 'Conflict',
    status: 409,
    detail: 'stream s1 is moving to n2',
    instance: '/problem',
    owner: 'n2',
    address: 'http://n2:7000',
    epoch: 4,
  });
  t.is(res.body.request_id, res.headers.get('x-request-id'));
});

test('StoreUnavailableError answers 503 with Retry-After, naming the store', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/store`);
  t.is(res.status, 503);
  t.is(res.headers.get('retry-after'), '1');
  t.like(res.body, { status: 503, type: 'urn:baton:problem:store-unavailable', store: 'audit store' });
  t.regex(res.body.detail, /audit store is unavailable: connection refused/);
});

test('InvalidIdentityError answers 400 with the supplier\'s reason', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/identity`);
  t.is(res.status, 400);
  t.like(res.body, { kind: 'authority', input: 'Bad Name', reason: 'npm names are lowercase' });
  t.regex(res.body.detail, /npm names are lowercase/);
});

test('a ZodError answers 400 listing every invalid field', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/zod`);
  t.is(res.status, 400);
  t.is(res.body.type, 'urn:baton:problem:invalid-input');
  t.deepEqual(
    res.body.invalid_fields.map((f: { path: string }) => f.path),
    ['target', 'limit'],
  );
  t.regex(res.body.detail, /target: .*; limit: /);
});

test('consensus errors: not appended -> 503, key reused -> 422, outcome unknown -> 503 saying to retry with the key', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const notAppended = await call(`${api.url}/not-appended`);
  t.is(notAppended.status, 503);
  t.is(notAppended.body.reason, 'queue_saturated');
  t.truthy(notAppended.headers.get('retry-after'));
  const reused = await call(`${api.url}/key-reused`);
  t.is(reused.status, 422);
  const unknown = await call(`${api.url}/outcome-unknown`);
  t.is(unknown.status, 503);
  t.regex(unknown.body.detail, /same Idempotency-Key/);
});

test('koa ctx.throw(4xx) keeps its status and message; a 5xx message is not exposed', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/koa-throw`);
  t.is(res.status, 400);
  t.is(res.body.detail, 'limit must be positive');
  const internal = await call(`${api.url}/koa-throw-500`);
  t.is(internal.status, 500);
  t.false(JSON.stringify(internal.body).includes('hunter2'));
});

test('an unexpected error answers 500 with a generic detail and the request id; the stack is logged, not sent', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/bug`, { headers: { 'X-Request-Id': 'req-42' } });
  t.is(res.status, 500);
  t.is(res.headers.get('content-type'), PROBLEM_CONTENT_TYPE);
  t.is(res.body.request_id, 'req-42');
  t.regex(res.body.detail, /req-42/);
  const wire = JSON.stringify(res.body);
  t.false(wire.includes('secret'));
  t.false(wire.includes('TypeError'));
  const logged = api.logger.records.find((r) => r.level === 'error');
  t.truthy(logged);
  t.is(logged!.fields.request_id, 'req-42');
  t.regex(String((logged!.fields.err as Error).stack), /TypeError: cannot read properties/);
});

test('an unknown route answers 404 problem+json', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/nowhere`);
  t.is(res.status, 404);
  t.is(res.headers.get('content-type'), PROBLEM_CONTENT_TYPE);
  t.like(res.body, { status: 404, instance: '/nowhere' });
  t.regex(res.body.detail, /GET \/nowhere/);
});

test('a wrong method answers 405 with Allow; an unknown method 501', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/only-post`, { method: 'DELETE' });
  t.is(res.status, 405);
  t.is(res.headers.get('allow'), 'POST');
  t.deepEqual(res.body.allowed, ['POST']);
  t.regex(res.body.detail, /DELETE is not allowed/);
  const weird = await call(`${api.url}/only-post`, { method: 'PROPFIND' });
  t.is(weird.status, 501);
  t.is(weird.body.status, 501);
});

test('a handler that sets an error status without a body still answers problem+json', async (t) => {
  const api = await startApi(throwingRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/teapot`);
  t.is(res.status, 418);
  t.like(res.body, { status: 418, title: "I'm a Teapot" });
});

test('a variant\'s mapper takes precedence over the defaults', async (t) => {
  const api = await startApi(throwingRouter(), {
    mappers: [
      (error) =>
        error instanceof StoreUnavailableError
          ? new HttpProblem({ status: 503, detail: 'transfer t-1 was committed; audit pending', extra: { transfer_id: 't-1' } })
          : undefined,
    ],
  });
  t.teardown(api.stop);
  const res = await call(`${api.url}/store`);
  t.is(res.status, 503);
  t.is(res.body.transfer_id, 't-1');
});
