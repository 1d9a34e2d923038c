import { request } from 'node:http';
import Router from '@koa/router';
import test from 'ava';
import {
  InvalidIdentityError,
  type IdentitySupplier,
  type OperationId,
  type AuthorityId,
} from '@baton/contracts/internal/identity-supplier.js';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { idempotencyKey } from '@baton/http/internal/idempotency-key.js';
import { call, startApi } from './harness.js';

/** Keys of 1-64 letters, digits and dashes; minted ones are numbered. */
function exampleSupplier(): IdentitySupplier {
  let minted = 0;
  return {
    ecosystem: 'example',
    authority: (raw) => raw as AuthorityId,
    operation: (raw) => {
      if (raw === undefined) return `minted-${++minted}` as OperationId;
      if (!/^[A-Za-z0-9-]{1,64}$/.test(raw)) {
        throw new InvalidIdentityError('operation', raw, 'use 1-64 letters, digits or dashes');
      }
      return raw as OperationId;
    },
  };
}

function router(): Router {
  const supplier = exampleSupplier();
  const r = new Router();
  r.post('/transfers', (ctx) => {
    ctx.body = { key: idempotencyKey(ctx, supplier) };
  });
  r.post('/fails-after-key', (ctx) => {
    idempotencyKey(ctx, supplier);
    throw new StoreUnavailableError('audit store', 'write failed');
  });
  return r;
}

test('a missing Idempotency-Key is minted by the supplier and returned in the header', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const res = await call(`${api.url}/transfers`, { method: 'POST' });
  t.is(res.body.key, 'minted-1');
  t.is(res.headers.get('idempotency-key'), 'minted-1');
});

test('a valid Idempotency-Key is used as given and echoed', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const res = await call(`${api.url}/transfers`, { method: 'POST', headers: { 'Idempotency-Key': '5f0c-drain-proj' } });
  t.is(res.body.key, '5f0c-drain-proj');
  t.is(res.headers.get('idempotency-key'), '5f0c-drain-proj');
});

test('an invalid Idempotency-Key answers 400 with the supplier\'s reason', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const res = await call(`${api.url}/transfers`, { method: 'POST', headers: { 'Idempotency-Key': 'no/slashes' } });
  t.is(res.status, 400);
  t.is(res.body.type, 'urn:baton:problem:invalid-idempotency-key');
  t.is(res.body.reason, 'use 1-64 letters, digits or dashes');
  t.is(res.headers.get('idempotency-key'), null);
});

test('an empty Idempotency-Key answers 400 rather than silently minting', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const res = await call(`${api.url}/transfers`, { method: 'POST', headers: { 'Idempotency-Key': ' ' } });
  t.is(res.status, 400);
  t.regex(res.body.detail, /empty/);
});

test('two Idempotency-Key headers answer 400', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      `${api.url}/transfers`,
      { method: 'POST', headers: ['Idempotency-Key', 'a-1', 'Idempotency-Key', 'b-2'] as unknown as Record<string, string> },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on('error', reject);
    req.end();
  });
  t.is(status, 400);
});

test('the key is echoed on an error answer, so the caller can retry under it', async (t) => {
  const api = await startApi(router());
  t.teardown(api.stop);
  const res = await call(`${api.url}/fails-after-key`, { method: 'POST' });
  t.is(res.status, 503);
  t.regex(res.headers.get('idempotency-key') ?? '', /^minted-\d+$/);
});
