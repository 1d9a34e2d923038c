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

/** The input is not a valid identity; `reason` says which rule it broke (shown to the caller). */
export class InvalidIdentityError extends BatonError {
  constructor(
    readonly kind: 'authority' | 'operation',
    readonly input: string,
    readonly reason: string,
  ) {
    super('invalid_identity', `invalid ${kind} ${JSON.stringify(input)}: ${reason}`);
  }
}
