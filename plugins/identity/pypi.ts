import { z } from 'zod';
import type { AuthorityId, IdentitySupplier, OperationId, Rng } from '@baton/contracts';
import {
  describeChar,
  firstCharOutside,
  invalidAuthority,
  requireString,
} from './identity-input.js';
import { defineIdentityPlugin } from './identity-plugin.js';
import { operationIdentity } from './operation-id.js';

export const pypiIdentityOptions = z.object({}).strict();

// ASCII only, spelled out: a case-insensitive Unicode regex would let the Kelvin sign (U+212A)
// pass as "k", which PyPI refuses.
const NAME_CHAR = /^[A-Za-z0-9._-]$/;
const ALNUM = /^[A-Za-z0-9]$/;
const SEPARATOR_RUN = /[-_.]+/g;

/**
 * Python project names as PyPI knows them. Valid names follow the core metadata spec (PEP 508):
 * ASCII letters, digits, `.`, `_` and `-`, starting and ending with a letter or digit. The
 * authority is the PEP 503 normalised name: lowercase, every run of `-`, `_` and `.` collapsed to
 * one `-`. So `Foo_Bar`, `foo-bar`, `FOO.bar` and `foo__-bar` are one project, one authority,
 * exactly as pip and PyPI resolve them.
 */
export class PypiIdentitySupplier implements IdentitySupplier {
  readonly ecosystem = 'pypi';

  constructor(private readonly rng: Rng) {}

  authority(raw: string): AuthorityId {
    const name = requireString('authority', raw);
    if (name.length === 0) throw invalidAuthority(name, 'a Python project name must not be empty');
    const bad = firstCharOutside(name, NAME_CHAR);
    if (bad) {
      throw invalidAuthority(
        name,
        `contains ${describeChar(bad.char)} at position ${bad.index}: a Python project name uses ` +
          'only ASCII letters, digits, ".", "_" and "-"',
      );
    }
    if (!ALNUM.test(name[0]) || !ALNUM.test(name[name.length - 1])) {
      throw invalidAuthority(
        name,
        'a Python project name must start and end with a letter or digit, not ".", "_" or "-"',
      );
    }
    return name.replace(SEPARATOR_RUN, '-').toLowerCase() as AuthorityId;
  }

  operation(raw?: string): OperationId {
    return operationIdentity(this.rng, raw);
  }
}

export const pypiIdentityPlugin = defineIdentityPlugin({
  id: 'identity-pypi',
  description: 'Authority identities as Python project names, normalised per PEP 503.',
  options: pypiIdentityOptions,
  create: (rng) => new PypiIdentitySupplier(rng),
});
