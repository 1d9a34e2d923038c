import { z } from 'zod';
import type {
  AuthorityId,
  IdentitySupplier,
  OperationId,
} from '../../framework/contracts/identity-supplier.js';
import type { Rng } from '../../framework/contracts/rng.js';
import { NPM_CORE_MODULE_NAMES, NPM_EXCLUDED_NAMES } from './npm-core-modules.js';
import { describeChar, invalidAuthority, requireString } from './identity-input.js';
import { defineIdentityPlugin } from './identity-plugin.js';
import { operationIdentity } from './operation-id.js';

export const NPM_MAX_NAME_LENGTH = 214;

export const npmIdentityOptions = z
  .object({
    /**
     * Also accept names npm allowed before its current rules (capitals, more than 214
     * characters, `~'!()*`, core module names), so authority over old packages such as
     * `JSONStream` can be moved. Names that were never valid stay refused.
     */
    legacyNames: z.boolean().default(false),
  })
  .strict();
export type NpmIdentityOptions = z.output<typeof npmIdentityOptions>;

const SCOPED = /^@([^/]+)\/([^/]+)$/;
const SPECIAL_IN_NAME = /[~'!()*]/;

/**
 * npm package names, by the rules of validate-npm-package-name for new packages: lowercase,
 * at most 214 characters (scope included), unscoped `name` or scoped `@scope/name`, URL-safe
 * characters only, no leading `.` or `_`, no leading or trailing spaces, not a Node.js core
 * module name, not `node_modules` or `favicon.ico`, no `~'!()*` in the part after the scope.
 *
 * npm names are compared exactly by the registry (`JSONStream` and `jsonstream` are two
 * packages), so nothing is rewritten: a valid name is its own authority, and an invalid one is
 * refused with the rule it broke rather than silently "fixed" into another package's name.
 */
export class NpmIdentitySupplier implements IdentitySupplier {
  readonly ecosystem = 'npm';

  constructor(
    private readonly rng: Rng,
    private readonly options: NpmIdentityOptions = { legacyNames: false },
  ) {}

  authority(raw: string): AuthorityId {
    const name = requireString('authority', raw);
    const reason = this.brokenRule(name);
    if (reason) throw invalidAuthority(name, reason);
    return name as AuthorityId;
  }

  operation(raw?: string): OperationId {
    return operationIdentity(this.rng, raw);
  }

  /** The first rule `name` breaks, as a sentence for the caller; undefined when it is valid. */
  private brokenRule(name: string): string | undefined {
    if (name.length === 0) return 'an npm package name must not be empty';
    if (name.trim() !== name) return 'an npm package name must not start or end with whitespace';
    if (name.startsWith('.')) return 'an npm package name must not start with a period';
    if (name.startsWith('_')) return 'an npm package name must not start with an underscore';
    if (NPM_EXCLUDED_NAMES.has(name.toLowerCase())) {
      return `${name.toLowerCase()} is reserved by npm and is never a package name`;
    }
    const scoped = SCOPED.exec(name);
    if (name.startsWith('@') && !scoped) {
      return 'a scoped npm package name has the form @scope/name, with one "/" and a non-empty scope and name';
    }
    const [scope, bare] = scoped ? [scoped[1], scoped[2]] : [undefined, name];
    if (scoped && bare.startsWith('.')) {
      return 'the name after the scope must not start with a period';
    }
    const unsafe = (scope === undefined ? [] : [scope])
      .concat(bare)
      .map(firstUrlUnsafeChar)
      .find(Boolean);
    if (unsafe) {
      const hint =
        unsafe === '/'
          ? 'only a scoped name (@scope/name) contains a "/"'
          : 'npm names use lowercase letters, digits, "-", "." and "_"';
      return `contains ${describeChar(unsafe)}, which is not URL-safe: ${hint}`;
    }
    if (this.options.legacyNames) return undefined;
    // The rules below came later: old packages may break them (see option legacyNames).
    if (NPM_CORE_MODULE_NAMES.has(name.toLowerCase())) {
      return `${name} is a Node.js core module name, which npm refuses for new packages`;
    }
    if (name.length > NPM_MAX_NAME_LENGTH) {
      return `is ${name.length} characters long: npm allows at most ${NPM_MAX_NAME_LENGTH}, scope included`;
    }
    if (name.toLowerCase() !== name) {
      return `npm package names must be lowercase (capitals are only found in legacy packages): did you mean ${JSON.stringify(name.toLowerCase())}?`;
    }
    const special = SPECIAL_IN_NAME.exec(bare);
    if (special) {
      return `contains ${describeChar(special[0])}: npm no longer allows any of ~'!()* in a package name`;
    }
    return undefined;
  }
}

/**
 * The first character `encodeURIComponent` would escape, which is what npm means by "not
 * URL-safe". A lone surrogate cannot be encoded at all, so it counts as unsafe too.
 */
function firstUrlUnsafeChar(part: string): string | undefined {
  for (const char of part) {
    let encoded: string;
    try {
      encoded = encodeURIComponent(char);
    } catch {
      return char;
    }
    if (encoded !== char) return char;
  }
  return undefined;
}

export const npmIdentityPlugin = defineIdentityPlugin({
  id: 'identity-npm',
  description: 'Authority identities as npm package names (scoped or not), by npm naming rules.',
  options: npmIdentityOptions,
  create: (rng, options) => new NpmIdentitySupplier(rng, options),
});
