import Router from '@koa/router';
import test from 'ava';
import { loggerOf, requestIdOf } from '@baton/http/internal/state.js';
import { problems } from '@baton/http/internal/problem.js';
import { call, startApi } from './harness.js';

function router(): Router {
  const r = new Router();
  r.get('/id', (ctx) => {
    loggerOf(ctx).info({ step: 'handler' }, 'handling');
    ctx.body = { id: requestIdOf(ctx) };
  });
  r.get('/fail', () => {
    throw problems.notFound('no such stream');
  });
  return r;
}

test('a sane X-Request-Id is adopted and echoed', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const res = await call(`${api.url}/id`, { headers: { 'X-Request-Id': 'abc-123.DEF:9_z' } });
  t.is(res.headers.get('x-request-id'), 'abc-123.DEF:9_z');
  t.is(res.body.id, 'abc-123.DEF:9_z');
});

test('an insane X-Request-Id is replaced by a minted one', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  for (const offered of ['has space', 'x'.repeat(129), 'quote"d', 'new\\nline']) {
    const res = await call(`${api.url}/id`, { headers: { 'X-Request-Id': offered } });
    t.not(res.body.id, offered);
    t.regex(res.body.id, /^[0-9a-f]{24}$/);
  }
});

test('a request without an id gets a distinct minted one each time', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const a = await call(`${api.url}/id`);
  const b = await call(`${api.url}/id`);
  t.regex(a.body.id, /^[0-9a-f]{24}$/);
  t.not(a.body.id, b.body.id);
  t.is(a.headers.get('x-request-id'), a.body.id);
});

test('the per-request logger carries the request id', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  await call(`${api.url}/id`, { headers: { 'X-Request-Id': 'trace-me' } });
  const record = api.logger.records.find((r) => r.fields.step === 'handler');
  t.is(record?.fields.request_id, 'trace-me');
  const completed = api.logger.records.find((r) => r.msg === 'request completed' && r.fields.request_id === 'trace-me');
  t.like(completed?.fields, { method: 'GET', path: '/id', status: 200 });
});

test('error answers carry the request id header too', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const res = await call(`${api.url}/fail`, { headers: { 'X-Request-Id': 'err-1' } });
  t.is(res.status, 404);
  t.is(res.headers.get('x-request-id'), 'err-1');
  t.is(res.body.request_id, 'err-1');
});
