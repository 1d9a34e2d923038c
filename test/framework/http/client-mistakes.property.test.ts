// Property: whatever a client sends (bytes, content types, headers), the shared pieces answer
// with a 2xx or a 4xx problem, never a 5xx. A 500 for a client's mistake is a bug.
import Router from '@koa/router';
import test from 'ava';
import fc from 'fast-check';
import { z } from 'zod';
import {
  InvalidIdentityError,
  type AuthorityId,
  type IdentitySupplier,
  type OperationId,
} from '@baton/contracts/internal/identity-supplier.js';
import { BearerTokens, requireScope } from '@baton/http/internal/auth.js';
import { idempotencyKey } from '@baton/http/internal/idempotency-key.js';
import { readValidBody } from '@baton/http/internal/json-body.js';
import { PROBLEM_CONTENT_TYPE } from '@baton/http/internal/problem.js';
import { validate } from '@baton/http/internal/validate.js';
import { call, startApi } from './harness.js';

const supplier: IdentitySupplier = {
  ecosystem: 'example',
  authority: (raw) => {
    if (!/^[a-z][a-z0-9-]{0,63}$/.test(raw)) throw new InvalidIdentityError('authority', raw, 'lowercase, 1-64 chars');
    return raw as AuthorityId;
  },
  operation: (raw) => {
    if (raw === undefined) return 'minted' as OperationId;
    if (!/^[A-Za-z0-9-]{1,64}$/.test(raw)) throw new InvalidIdentityError('operation', raw, 'letters, digits, dashes');
    return raw as OperationId;
  },
};

const transferBody = z.object({
  authority: z.string(),
  target: z.string().min(1),
  reason: z.string().min(1).max(500),
});

function router(): Router {
  const r = new Router();
  r.post('/transfers', requireScope('admin:write'), async (ctx) => {
    const key = idempotencyKey(ctx, supplier);
    const body = await readValidBody(ctx, transferBody, { limitBytes: 512 });
    const limit = validate(z.object({ limit: z.coerce.number().int().positive().optional() }), ctx.query, 'query');
    ctx.body = { key, authority: supplier.authority(body.authority), limit };
  });
  return r;
}

const printable = fc.string({ unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@AZaz[\\]^_`{|}~'.split('')), maxLength: 80 });
const jsonish = fc.oneof(
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify({ authority: v, target: 'dc-2', reason: 'drain' })),
  fc.record({ authority: printable, target: printable, reason: printable }).map((v) => JSON.stringify(v)),
  fc
    .record({ authority: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), target: fc.constant('dc-2'), reason: fc.constant('drain') })
    .map((v) => JSON.stringify(v)),
  printable,
  fc.string({ maxLength: 700 }),
);

test('no input from a client produces a 5xx', async (t) => {
  const api = await startApi(router(), {
    tokens: new BearerTokens([{ token: 'good-token', principal: 'olivia', scopes: ['admin:write'] }]),
  });
  t.teardown(api.stop);
  const seen = new Set<number>();
  await fc.assert(
    fc.asyncProperty(
      jsonish,
      fc.constantFrom('application/json', 'text/plain', 'application/x+json', '', 'application/json; charset=utf-8'),
      fc.option(printable, { nil: undefined }),
      fc.option(printable, { nil: undefined }),
      fc.constantFrom('Bearer good-token', 'Bearer bad', 'Basic x', '', 'bearer good-token'),
      fc.option(printable, { nil: undefined }),
      async (body, contentType, key, requestId, authorization, limit) => {
        const headers: Record<string, string> = {};
        if (contentType) headers['Content-Type'] = contentType;
        if (key !== undefined) headers['Idempotency-Key'] = key;
        if (requestId !== undefined) headers['X-Request-Id'] = requestId;
        if (authorization) headers.Authorization = authorization;
        const query = limit === undefined ? '' : `?limit=${encodeURIComponent(limit)}`;
        const res = await call(`${api.url}/transfers${query}`, { method: 'POST', headers, body });
        seen.add(res.status);
        if (res.status >= 500) return false;
        if (res.status >= 400 && res.headers.get('content-type') !== PROBLEM_CONTENT_TYPE) return false;
        return true;
      },
    ),
    { numRuns: 300, seed: 20240601 },
  );
  // The inputs reach every branch, so the property says something about each of them.
  for (const status of [200, 400, 401, 415]) t.true(seen.has(status), `status ${status} was exercised`);
  t.false(api.logger.records.some((r) => r.level === 'error'), 'no unexpected error was logged');
});
