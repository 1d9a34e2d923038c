import type { Context } from 'koa';
import { type IdentitySupplier, type OperationId, InvalidIdentityError, OPERATION_ID_PATTERN } from '@baton/contracts';
import { HttpProblem } from './problem.js';
import { setState } from './state.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * The request's operation identity: the caller's Idempotency-Key validated by the ecosystem's
 * supplier, or a freshly minted one when the header is absent. Either way it is echoed in the
 * response header (also on error answers), so a caller who sent none can still retry the same
 * operation with the key it was assigned.
 */
export function idempotencyKey(ctx: Context, supplier: IdentitySupplier): OperationId {
  const header = keyHeader(ctx, 'omit it to have a key assigned, or send one');
  let key: OperationId;
  if (header === undefined) {
    key = supplier.operation();
  } else {
    try {
      key = supplier.operation(header);
    } catch (error) {
      if (error instanceof InvalidIdentityError) {
        throw badKey(`the ${IDEMPOTENCY_KEY_HEADER} ${JSON.stringify(header)} is invalid: ${error.reason}`, error);
      }
      throw error;
    }
  }
  setState(ctx, 'idempotencyKey', key);
  ctx.set(IDEMPOTENCY_KEY_HEADER, key);
  return key;
}

/**
 * The caller's Idempotency-Key where an API keys only the writes a caller chose to key (the
 * stream variant's admin writes): undefined when the header is absent, else validated by the
 * rule every operation identity follows (OPERATION_ID_PATTERN: 1 to 128 of `A-Za-z0-9._:~-`)
 * and echoed in the response. A write sent without one is not keyed, so keys nobody will retry
 * with do not crowd the retries that matter out of the consensus' bounded window.
 */
export function givenIdempotencyKey(ctx: Context): OperationId | undefined {
  const header = keyHeader(ctx, 'omit it, or send a key');
  if (header === undefined) return undefined;
  if (!OPERATION_ID_PATTERN.test(header)) {
    throw badKey(
      `the ${IDEMPOTENCY_KEY_HEADER} ${JSON.stringify(header.slice(0, 200))} is invalid: a key is 1 to 128 ASCII letters, digits and . _ : ~ -`,
    );
  }
  const key = header as OperationId;
  setState(ctx, 'idempotencyKey', key);
  ctx.set(IDEMPOTENCY_KEY_HEADER, key);
  return key;
}

/** The one Idempotency-Key header of the request, if any; repeated or empty is a 400. */
function keyHeader(ctx: Context, whenEmpty: string): string | undefined {
  // headersDistinct: Node would otherwise join repeated headers into one "a, b" value.
  const values = ctx.req.headersDistinct['idempotency-key'];
  if (values && values.length > 1) {
    throw badKey(`send one ${IDEMPOTENCY_KEY_HEADER} header, not ${values.length}`);
  }
  const header = values?.[0];
  if (header !== undefined && header.trim() === '') {
    throw badKey(`the ${IDEMPOTENCY_KEY_HEADER} header is empty: ${whenEmpty}`);
  }
  return header;
}

function badKey(detail: string, cause?: InvalidIdentityError): HttpProblem {
  return new HttpProblem({
    status: 400,
    type: 'invalid-idempotency-key',
    detail,
    extra: cause ? { reason: cause.reason } : undefined,
    cause,
  });
}
