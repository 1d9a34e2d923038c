import Router from '@koa/router';
import test from 'ava';
import { authenticate, BearerTokens, requireScope } from '@baton/http/internal/auth.js';
import { principalOf } from '@baton/http/internal/state.js';
import { ConfigError } from '@baton/kernel/internal/wiring-error.js';
import { call, startApi } from './harness.js';

const tokens = new BearerTokens([
  { token: 'olivia-secret-token', principal: 'olivia', scopes: ['admin:write', 'admin:read'] },
  { token: 'rita-reader-token', principal: 'rita', scopes: ['admin:read'] },
]);

function adminRouter(): Router {
  const router = new Router();
  router.post('/admin/transfers', requireScope('admin:write'), (ctx) => {
    const principal = principalOf(ctx);
    ctx.body = { actor: principal.name };
  });
  router.get('/admin/transfers', requireScope('admin:read'), (ctx) => {
    ctx.body = { actor: principalOf(ctx).name };
  });
  router.get('/public', (ctx) => {
    ctx.body = { open: true };
  });
  return router;
}

const bearer = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });

test('a request without a token answers 401 with a Bearer challenge naming the scope', async (t) => {
  const api = await startApi(adminRouter(), { tokens });
  t.teardown(api.stop);
  const res = await call(`${api.url}/admin/transfers`, { method: 'POST' });
  t.is(res.status, 401);
  t.is(res.headers.get('www-authenticate'), 'Bearer realm="baton", scope="admin:write"');
  t.like(res.body, { status: 401, required_scope: 'admin:write' });
});

test('an unknown token answers 401 invalid_token without echoing the token', async (t) => {
  const api = await startApi(adminRouter(), { tokens });
  t.teardown(api.stop);
  const res = await call(`${api.url}/admin/transfers`, { method: 'POST', ...bearer('guessed-token-123') });
  t.is(res.status, 401);
  t.regex(res.headers.get('www-authenticate')!, /error="invalid_token"/);
  t.false(JSON.stringify(res.body).includes('guessed-token-123'));
});

test('a non-Bearer Authorization header answers 401', async (t) => {
  const api = await startApi(adminRouter(), { tokens });
  t.teardown(api.stop);
  const res = await call(`${api.url}/admin/transfers`, {
    method: 'POST',
    headers: { Authorization: 'Basic b2xpdmlhOnB3' },
  });
  t.is(res.status, 401);
  t.regex(res.body.detail, /Bearer <token>/);
});

test('a known principal without the scope answers 403 insufficient_scope', async (t) => {
  const api = await startApi(adminRouter(), { tokens });
  t.teardown(api.stop);
  const res = await call(`${api.url}/admin/transfers`, { method: 'POST', ...bearer('rita-reader-token') });
  t.is(res.status, 403);
  t.regex(res.headers.get('www-authenticate')!, /error="insufficient_scope", scope="admin:write"/);
  t.like(res.body, { principal: 'rita', required_scope: 'admin:write' });
});

test('a token with the scope passes and the handler sees its principal', async (t) => {
  const api = await startApi(adminRouter(), { tokens });
  t.teardown(api.stop);
  const write = await call(`${api.url}/admin/transfers`, { method: 'POST', ...bearer('olivia-secret-token') });
  t.is(write.status, 200);
  t.deepEqual(write.body, { actor: 'olivia' });
  const read = await call(`${api.url}/admin/transfers`, bearer('rita-reader-token'));
  t.deepEqual(read.body, { actor: 'rita' });
});

test('routes without requireScope stay public without a token, and refuse a token that is wrong', async (t) => {
  const api = await startApi(adminRouter(), { tokens });
  t.teardown(api.stop);
  t.is((await call(`${api.url}/public`)).status, 200);
  t.is((await call(`${api.url}/public`, bearer('rita-reader-token'))).status, 200);
  const wrong = await call(`${api.url}/public`, bearer('nonsense'));
  t.is(wrong.status, 401, 'a caller with a wrong token learns it instead of taking it for good');
  t.regex(wrong.headers.get('www-authenticate')!, /error="invalid_token"/);
  t.regex(wrong.body.detail, /not recognised/);
  const malformed = await call(`${api.url}/public`, { headers: { Authorization: 'Basic b2xpdmlhOnB3' } });
  t.is(malformed.status, 401);
});

test('requireScope without authenticate fails as a wiring bug (500), not as a 401', async (t) => {
  const api = await startApi(adminRouter());
  t.teardown(api.stop);
  const res = await call(`${api.url}/admin/transfers`, { method: 'POST', ...bearer('olivia-secret-token') });
  t.is(res.status, 500);
  t.true(api.logger.records.some((r) => /without authenticate/.test(String((r.fields.err as Error)?.message))));
});

test('lookup finds each principal by its own token only', (t) => {
  t.is(tokens.lookup('olivia-secret-token')?.name, 'olivia');
  t.is(tokens.lookup('rita-reader-token')?.name, 'rita');
  t.is(tokens.lookup('olivia-secret-toke'), undefined);
  t.is(tokens.lookup(''), undefined);
  t.true(tokens.lookup('olivia-secret-token')!.scopes.has('admin:write'));
});

test('token configuration is validated: duplicates and empty tokens are refused', (t) => {
  t.throws(
    () =>
      new BearerTokens([
        { token: 'same', principal: 'a', scopes: [] },
        { token: 'same', principal: 'b', scopes: [] },
      ]),
    { instanceOf: ConfigError, message: /tokens\[1\] repeats a token/ },
  );
  t.throws(() => new BearerTokens([{ token: '', principal: 'a', scopes: [] }]), {
    instanceOf: ConfigError,
    message: /tokens\.0\.token/,
  });
  t.throws(() => new BearerTokens([{ token: 'has space', principal: 'a' }]), { instanceOf: ConfigError });
});

test('authenticate is usable on its own as router middleware', async (t) => {
  const router = new Router();
  router.use(authenticate(tokens));
  router.get('/me', requireScope('admin:read'), (ctx) => {
    ctx.body = { me: principalOf(ctx).name };
  });
  const api = await startApi(router);
  t.teardown(api.stop);
  const res = await call(`${api.url}/me`, bearer('olivia-secret-token'));
  t.deepEqual(res.body, { me: 'olivia' });
});
