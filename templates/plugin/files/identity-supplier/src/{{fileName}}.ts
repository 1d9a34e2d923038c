import type { AuthorityId, IdentitySupplier, OperationId, Rng } from '@baton/contracts';
import type { {{className}}Options } from './options.js';

/**
 * {{className}}: an IdentitySupplier (baton/framework/contracts/identity-supplier.ts) for the
 * {{ecosystem}} ecosystem. Baton never looks inside an identity: this class alone decides which
 * names are valid and which spellings are one authority.
 *
 * Both methods throw until you implement them; the conformance suite in
 * test/{{fileName}}.test.ts states the contract one rule per test:
 * - `authority(raw)` normalises (two spellings of one project are one authority) and validates,
 *   raising InvalidIdentityError('authority', raw, reason) with a reason naming the rule broken.
 * - `operation(raw?)` validates a caller's Idempotency-Key, or mints one from the injected Rng
 *   when none is given. Every ecosystem shares that rule: `operationIdentity(this.rng, raw)`
 *   from baton/plugins/identity/operation-id.js implements it.
 */
export class {{className}} implements IdentitySupplier {
  readonly ecosystem = '{{ecosystem}}';

  constructor(
    readonly rng: Rng,
    readonly options: {{className}}Options,
  ) {}

  authority(raw: string): AuthorityId {
    throw notImplemented('authority', raw);
  }

  operation(raw?: string): OperationId {
    throw notImplemented('operation', raw);
  }
}

function notImplemented(method: string, raw: unknown): Error {
  return new Error(
    `{{className}}.${method}(${JSON.stringify(raw)}) is not implemented yet: implement it in src/{{fileName}}.ts`,
  );
}
