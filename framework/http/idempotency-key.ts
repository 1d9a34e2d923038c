import type { Context } from 'koa';
import { type IdentitySupplier, type OperationId, InvalidIdentityError } from '@baton/contracts';
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
  // headersDistinct: Node would otherwise join repeated headers into one "a, b" value.
  const values = ctx.req.headersDistinct['idempotency-key'];
  if (values && values.length > 1) {
    throw badKey(`send one ${IDEMPOTENCY_KEY_HEADER} header, not ${values.length}`);
  }
  const header = values?.[0];
  let key: OperationId;
  if (header === undefined) {
    key = supplier.operation();
  } else if (header.trim() === '') {
    throw badKey(`the ${IDEMPOTENCY_KEY_HEADER} header is empty: omit it to have a key assigned, or send one`);
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

function badKey(detail: string, cause?: InvalidIdentityError): HttpProblem {
  return new HttpProblem({
    status: 400,
    type: 'invalid-idempotency-key',
    detail,
    extra: cause ? { reason: cause.reason } : undefined,
    cause,
  });
}
