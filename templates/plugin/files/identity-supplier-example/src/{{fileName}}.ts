import {
  type AuthorityId,
  type IdentitySupplier,
  type OperationId,
  InvalidIdentityError,
  type Rng,
} from '@baton/contracts';
import { operationIdentity } from '@baton/plugin-identity';
import type { {{className}}Options } from './options.js';

const ALLOWED = /^[A-Za-z0-9-]$/;

/**
 * {{className}}: an IdentitySupplier for a small example ecosystem whose projects are named by
 * slugs: ASCII letters, digits and dashes, starting with a letter or digit, at most
 * `maxLength` characters. Case does not matter (`My-Project` and `my-project` are one project),
 * so the normal form is lower case.
 *
 * Replace these rules by your ecosystem's own; keep the shape: normalise, then validate, and
 * refuse with InvalidIdentityError giving the input and a reason that names the rule broken.
 */
export class {{className}} implements IdentitySupplier {
  readonly ecosystem = '{{ecosystem}}';

  constructor(
    readonly rng: Rng,
    readonly options: {{className}}Options,
  ) {}

  authority(raw: string): AuthorityId {
    // Identities arrive from headers, JSON and config: a non-string is the caller's mistake.
    if (typeof raw !== 'string') {
      throw new InvalidIdentityError('authority', String(raw), `must be a string, got ${raw === null ? 'null' : typeof raw}`);
    }
    const refuse = (reason: string) => new InvalidIdentityError('authority', raw, reason);
    if (raw.length === 0) throw refuse('must not be empty');
    if (raw.length > this.options.maxLength) {
      throw refuse(`is ${raw.length} characters long: the limit is ${this.options.maxLength} (option maxLength)`);
    }
    let index = 0;
    for (const char of raw) {
      if (!ALLOWED.test(char)) {
        const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
        throw refuse(`contains ${code} ${JSON.stringify(char)} at position ${index}: use only ASCII letters, digits and dashes`);
      }
      index += char.length;
    }
    if (raw.startsWith('-')) throw refuse('must start with a letter or a digit, not a dash');
    return raw.toLowerCase() as AuthorityId;
  }

  operation(raw?: string): OperationId {
    // The Idempotency-Key rule is the same for every ecosystem: Baton's own implementation.
    return operationIdentity(this.rng, raw);
  }
}
