import { IDEMPOTENCY_KEY_HEADER } from '@baton/client';

/** The Idempotency-Key header of a change the operator keyed (--key), none otherwise. */
export function keyHeader(key: string | undefined): Record<string, string> {
  return key === undefined ? {} : { [IDEMPOTENCY_KEY_HEADER]: key };
}
