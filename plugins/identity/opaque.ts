import { z } from 'zod';
import type { AuthorityId, IdentitySupplier, OperationId, Rng } from '@baton/contracts';
import { describeChar, invalidAuthority, requireString } from './identity-input.js';
import { defineIdentityPlugin } from './identity-plugin.js';
import { operationIdentity } from './operation-id.js';

export const OPAQUE_DEFAULT_MAX_BYTES = 256;

export const opaqueIdentityOptions = z
  .object({
    /** Longest authority accepted, in UTF-8 bytes of its NFC form. */
    maxBytes: z.number().int().min(1).max(65536).default(OPAQUE_DEFAULT_MAX_BYTES),
  })
  .strict();
export type OpaqueIdentityOptions = z.output<typeof opaqueIdentityOptions>;

const LONE_SURROGATE = /\p{Cs}/u;
const CONTROL = /\p{Cc}/u;

/**
 * Authorities of an ecosystem Baton knows nothing about: any non-empty Unicode text, taken as
 * given except for NFC normalisation, so `é` typed as one code point or as `e` plus a combining
 * accent is one authority (they look identical; a person cannot tell them apart).
 *
 * Refused: control characters (they corrupt logs and headers and are invisible), lone UTF-16
 * surrogates (not encodable as UTF-8, so the text could not be stored or sent faithfully), and
 * anything longer than `maxBytes` UTF-8 bytes once normalised. Spaces and every other printable
 * character are kept verbatim: for an opaque ecosystem, `" a"` and `"a"` are different names.
 */
export class OpaqueIdentitySupplier implements IdentitySupplier {
  readonly ecosystem = 'opaque';

  constructor(
    private readonly rng: Rng,
    private readonly options: OpaqueIdentityOptions = { maxBytes: OPAQUE_DEFAULT_MAX_BYTES },
  ) {}

  authority(raw: string): AuthorityId {
    const input = requireString('authority', raw);
    if (input.length === 0) throw invalidAuthority(input, 'must not be empty');
    const surrogate = LONE_SURROGATE.exec(input);
    if (surrogate) {
      throw invalidAuthority(
        input,
        `contains a lone surrogate ${describeChar(surrogate[0])} at position ${surrogate.index}: ` +
          'it is not valid Unicode and cannot be encoded as UTF-8',
      );
    }
    const control = CONTROL.exec(input);
    if (control) {
      throw invalidAuthority(
        input,
        `contains control character ${describeChar(control[0])} at position ${control.index}: remove it`,
      );
    }
    const normalised = input.normalize('NFC');
    const bytes = Buffer.byteLength(normalised, 'utf8');
    if (bytes > this.options.maxBytes) {
      throw invalidAuthority(
        input,
        `is ${bytes} bytes in UTF-8 (NFC): the limit is ${this.options.maxBytes} bytes (option maxBytes)`,
      );
    }
    return normalised as AuthorityId;
  }

  operation(raw?: string): OperationId {
    return operationIdentity(this.rng, raw);
  }
}

export const opaqueIdentityPlugin = defineIdentityPlugin({
  id: 'identity-opaque',
  description: 'Authority identities as opaque Unicode text (NFC, no control characters, bounded).',
  options: opaqueIdentityOptions,
  create: (rng, options) => new OpaqueIdentitySupplier(rng, options),
});
