import { type OperationId, InvalidIdentityError, type Rng } from '@baton/contracts';
import { describeChar, firstCharOutside, requireString } from './identity-input.js';

/**
 * The rule for an operation identity (a transfer's Idempotency-Key), shared by every ecosystem:
 * 1 to 128 characters among ASCII letters, digits and `.` `_` `:` `~` `-`.
 *
 * Why so narrow: the key travels in an HTTP header, in log lines, in audit records and in
 * storage keys. Excluding spaces, quotes, slashes, `%` and non-ASCII means it never needs
 * escaping or normalising anywhere, so two spellings can never name one operation. UUIDs, ULIDs,
 * hex digests and human keys like `5f0c-drain-proj` all fit. Keys are case-sensitive and taken
 * verbatim: a retry must present exactly the key it was given.
 */
export const OPERATION_ID_MAX_LENGTH = 128;
const OPERATION_ID_CHAR = /^[A-Za-z0-9._:~-]$/;

export function validateOperationId(raw: unknown): OperationId {
  const key = requireString('operation', raw);
  const reject = (reason: string) => new InvalidIdentityError('operation', key, reason);
  if (key.length === 0) {
    throw reject('an Idempotency-Key must not be empty: omit it to have one assigned');
  }
  if (key.length > OPERATION_ID_MAX_LENGTH) {
    throw reject(
      `is ${key.length} characters long: an Idempotency-Key has at most ${OPERATION_ID_MAX_LENGTH}`,
    );
  }
  const bad = firstCharOutside(key, OPERATION_ID_CHAR);
  if (bad) {
    throw reject(
      `contains ${describeChar(bad.char)} at position ${bad.index}: an Idempotency-Key uses only ` +
        `ASCII letters, digits and . _ : ~ - (no spaces)`,
    );
  }
  return key as OperationId;
}

/**
 * A fresh operation identity: a version-4 UUID built from 16 bytes of the injected Rng, so a
 * seeded simulation mints the same identities on every replay while production draws them from
 * the operating system. 122 random bits make a collision between two minted keys negligible.
 */
export function mintOperationId(rng: Rng): OperationId {
  const hex = rng.hex(16).split('');
  hex[12] = '4';
  hex[16] = '89ab'[parseInt(hex[16], 16) & 0b11];
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}` as OperationId;
}

/** `operation(raw?)` of the contract: validate the caller's key, or mint one when none was given. */
export function operationIdentity(rng: Rng, raw: unknown): OperationId {
  return raw === undefined ? mintOperationId(rng) : validateOperationId(raw);
}
