import { BatonError } from './errors.js';
import { token } from './token.js';

/** An authority's identity, normalised by its ecosystem. The engine never looks inside. */
export type AuthorityId = string & { readonly __authority: true };
/** An operation's identity (a transfer's Idempotency-Key). The engine never looks inside. */
export type OperationId = string & { readonly __operation: true };

/**
 * Opaque identities for one ecosystem (npm packages, PyPI projects, OCI repositories...).
 * `authority` normalises (two spellings of one project are one authority) and validates;
 * `operation` validates a caller's Idempotency-Key, or mints a fresh one when none was given.
 */
export interface IdentitySupplier {
  /** Short name of the ecosystem, e.g. "npm". */
  readonly ecosystem: string;
  authority(raw: string): AuthorityId;
  operation(raw?: string): OperationId;
}

export const IDENTITY_SUPPLIER = token<IdentitySupplier>('IdentitySupplier');

/**
 * What every supplier accepts as an operation identity (an Idempotency-Key): 1 to 128 ASCII
 * letters, digits and `. _ : ~ -`. Such a key needs no escaping in a header, a log line or a
 * storage key and has exactly one spelling, so it is taken verbatim (case-sensitive).
 */
export const OPERATION_ID_PATTERN = /^[A-Za-z0-9._:~-]{1,128}$/;

/** Inputs longer than this are shortened in error messages (the whole input stays in `input`). */
const SHOWN_INPUT_LIMIT = 200;

function shown(input: string): string {
  const text = typeof input === 'string' ? input : String(input);
  return JSON.stringify(text.length > SHOWN_INPUT_LIMIT ? `${text.slice(0, SHOWN_INPUT_LIMIT)}…` : text);
}

/** The input is not a valid identity; `reason` says which rule it broke (shown to the caller). */
export class InvalidIdentityError extends BatonError {
  constructor(
    readonly kind: 'authority' | 'operation',
    readonly input: string,
    readonly reason: string,
  ) {
    super('invalid_identity', `invalid ${kind} ${shown(input)}: ${reason}`);
  }
}
