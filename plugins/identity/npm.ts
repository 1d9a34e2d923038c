import { z } from 'zod';
import type { AuthorityId, IdentitySupplier, OperationId, Rng } from '@baton/contracts';
import validateNpmPackageName from 'validate-npm-package-name';
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
 * npm package names, judged by validate-npm-package-name, the library npm itself uses: its
 * errors make a name invalid for every package, its warnings for new packages only (the rules
 * npm added later: core module names, capitals, more than 214 characters, `~'!()*`). The
 * library ships its own list of core module names, so every member of a cluster judges a name
 * alike whatever Node version it runs.
 *
 * npm names are compared exactly by the registry (`JSONStream` and `jsonstream` are two
 * packages), so nothing is rewritten: a valid name is its own authority, and an invalid one is
 * refused with the rule it broke, explained, rather than silently "fixed" into another
 * package's name.
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
    let verdict: ReturnType<typeof validateNpmPackageName>;
    try {
      verdict = validateNpmPackageName(name);
    } catch {
      // A lone surrogate: the library's encodeURIComponent cannot encode it, so it is not URL-safe.
      return unsafeCharRule(name);
    }
    const broken = [...(verdict.errors ?? []), ...(this.options.legacyNames ? [] : (verdict.warnings ?? []))];
    return broken.length === 0 ? undefined : explain(name, broken[0]);
  }
}

/** The library's message for the rule `name` broke, in words that say what to do about it. */
function explain(name: string, rule: string): string {
  if (rule === 'name length must be greater than zero') return 'an npm package name must not be empty';
  if (rule === 'name cannot contain leading or trailing spaces') {
    return 'an npm package name must not start or end with whitespace';
  }
  if (rule === 'name cannot start with a period') {
    return name.startsWith('.')
      ? 'an npm package name must not start with a period'
      : 'the name after the scope must not start with a period';
  }
  if (rule === 'name cannot start with a hyphen') return 'an npm package name must not start with a hyphen';
  if (rule === 'name cannot start with an underscore') return 'an npm package name must not start with an underscore';
  if (rule.endsWith(' is not a valid package name')) {
    return `${name.toLowerCase()} is reserved by npm and is never a package name`;
  }
  if (rule === 'name can only contain URL-friendly characters') return unsafeCharRule(name);
  if (rule.endsWith(' is a core module name')) {
    return `${name} is a Node.js core module name, which npm refuses for new packages`;
  }
  if (rule.includes('more than 214 characters')) {
    return `is ${name.length} characters long: npm allows at most ${NPM_MAX_NAME_LENGTH}, scope included`;
  }
  if (rule.includes('capital letters')) {
    return `npm package names must be lowercase (capitals are only found in legacy packages): did you mean ${JSON.stringify(name.toLowerCase())}?`;
  }
  if (rule.includes('special characters')) {
    const special = SPECIAL_IN_NAME.exec(name.split('/').at(-1)!)?.[0] ?? '~';
    return `contains ${describeChar(special)}: npm no longer allows any of ~'!()* in a package name`;
  }
  return rule;
}

/** Which character is not URL-safe, and where it may go: a "/" only in a scoped name. */
function unsafeCharRule(name: string): string {
  const scoped = SCOPED.exec(name);
  if (name.startsWith('@') && !scoped) {
    return 'a scoped npm package name has the form @scope/name, with one "/" and a non-empty scope and name';
  }
  const parts = scoped ? [scoped[1], scoped[2]] : [name];
  const unsafe = parts.map(firstUrlUnsafeChar).find(Boolean) ?? name;
  const hint =
    unsafe === '/'
      ? 'only a scoped name (@scope/name) contains a "/"'
      : 'npm names use lowercase letters, digits, "-", "." and "_"';
  return `contains ${describeChar(unsafe)}, which is not URL-safe: ${hint}`;
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
