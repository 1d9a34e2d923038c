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

/** Longest reference clients accept: registry host (and port), "/", and the repository name. */
export const OCI_MAX_REFERENCE_LENGTH = 255;

// A path component of the OCI distribution spec: lowercase alphanumerics joined by one ".",
// one or two "_", or any number of "-".
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const PATH_CHAR = /^[a-z0-9._-]$/;
const DOMAIN_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const HOST = new RegExp(
  `^(${DOMAIN_LABEL}(?:\\.${DOMAIN_LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::([0-9]+))?$`,
);

type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** `host[:port]` in canonical form: lowercase host (DNS ignores case), port without leading zeros. */
function parseRegistryHost(text: string): Parsed<string> {
  const match = HOST.exec(text);
  if (!match) {
    return {
      ok: false,
      reason: `registry host ${JSON.stringify(text)} is not a hostname, IPv4 or [IPv6] address with an optional :port`,
    };
  }
  const host = match[1].toLowerCase();
  if (match[2] === undefined) return { ok: true, value: host };
  const port = Number(match[2]);
  if (!(port >= 1 && port <= 65535)) {
    return { ok: false, reason: `registry port ${match[2]} is out of range: use 1 to 65535` };
  }
  return { ok: true, value: `${host}:${port}` };
}

export const ociIdentityOptions = z
  .object({
    /**
     * The registry (`host[:port]`) this deployment serves. A name prefixed with it is the same
     * repository as the bare name; its length (plus the `/`) counts toward the 255 limit.
     */
    registry: z
      .string()
      .transform((text, ctx) => {
        const parsed = parseRegistryHost(text);
        if (parsed.ok) return parsed.value;
        ctx.addIssue({ code: 'custom', message: parsed.reason });
        return z.NEVER;
      })
      .optional(),
  })
  .strict();
export type OciIdentityOptions = z.output<typeof ociIdentityOptions>;

/**
 * OCI repository names (`library/ubuntu`, `team/app`), exactly the `<name>` of the distribution
 * spec: path components of lowercase letters and digits joined by one `.`, one or two `_`, or
 * dashes, separated by `/`. An authority is a repository of the registry this deployment serves,
 * so the name is what that registry sees in `/v2/<name>/...`, and it is never rewritten: uppercase
 * is refused (every registry refuses it), as are tags (`:latest`) and digests (`@sha256:...`),
 * which name images rather than repositories.
 *
 * Host prefixes. Docker guesses that a dotted first component is a registry host, but
 * `registry.example.com/app` is also a valid repository path, so guessing would refuse or
 * misread real names. Instead the served registry is configured (option `registry`,
 * `host[:port]`): a leading `<registry>/` is dropped (host compared without case, port without
 * leading zeros), so `registry.example.com/team/app` and `team/app` are one authority. A
 * `host:port/` prefix of any other registry is refused (a colon cannot be part of a path), and a
 * dotted first component that is not the served registry is an ordinary path component.
 *
 * Length: clients accept at most 255 characters for host, `/` and name together, so the served
 * registry's `host[:port]/` counts toward the limit when it is configured.
 */
export class OciIdentitySupplier implements IdentitySupplier {
  readonly ecosystem = 'oci';

  constructor(
    private readonly rng: Rng,
    private readonly options: OciIdentityOptions = {},
  ) {}

  authority(raw: string): AuthorityId {
    const name = requireString('authority', raw);
    const parsed = this.parse(name);
    if (!parsed.ok) throw invalidAuthority(name, parsed.reason);
    return parsed.value as AuthorityId;
  }

  operation(raw?: string): OperationId {
    return operationIdentity(this.rng, raw);
  }

  private parse(name: string): Parsed<string> {
    if (name.length === 0) return { ok: false, reason: 'an OCI repository name must not be empty' };
    const at = name.indexOf('@');
    if (at >= 0) {
      return {
        ok: false,
        reason: `"${name.slice(at)}" is a digest, which names an image, not a repository: remove it`,
      };
    }
    const components = name.split('/');
    if (components.length > 1) {
      const prefix = this.hostPrefix(components[0]);
      if (!prefix.ok) return prefix;
      if (prefix.value) components.shift();
      // "<registry>/<registry>/app" would name "<registry>/app", which itself reads as "app":
      // two names for one id, and one that cannot be written back. Refuse it.
      if (prefix.value && components.length > 1 && this.isServedRegistry(components[0])) {
        return {
          ok: false,
          reason: `repeats the registry host ${this.options.registry}: give it at most once`,
        };
      }
    }
    for (const [i, component] of components.entries()) {
      const reason = componentProblem(component, i === components.length - 1);
      if (reason) return { ok: false, reason };
    }
    const path = components.join('/');
    const registry = this.options.registry;
    const length = registry === undefined ? path.length : registry.length + 1 + path.length;
    if (length > OCI_MAX_REFERENCE_LENGTH) {
      const counted = registry === undefined ? '' : ` with registry ${registry}`;
      return {
        ok: false,
        reason: `is ${length} characters${counted}: OCI clients accept at most ${OCI_MAX_REFERENCE_LENGTH}`,
      };
    }
    return { ok: true, value: path };
  }

  private isServedRegistry(component: string): boolean {
    if (this.options.registry === undefined) return false;
    const asHost = parseRegistryHost(component);
    return asHost.ok && asHost.value === this.options.registry;
  }

  /** Whether `first` is the served registry's prefix (true), a path component (false), or refused. */
  private hostPrefix(first: string): Parsed<boolean> {
    const registry = this.options.registry;
    if (this.isServedRegistry(first)) return { ok: true, value: true };
    if (!first.includes(':')) return { ok: true, value: false };
    const served =
      registry === undefined
        ? 'no registry is configured (option registry)'
        : `this deployment serves ${registry}`;
    return {
      ok: false,
      reason: `"${first}/" is the host of a registry, but ${served}: give the repository path without it`,
    };
  }
}

/** Why one path component is invalid, or undefined. `last` because only there can a tag sit. */
function componentProblem(component: string, last: boolean): string | undefined {
  if (component.length === 0) {
    return 'has an empty path component: remove the leading, trailing or doubled "/"';
  }
  const colon = component.indexOf(':');
  if (colon >= 0 && last) {
    return `"${component.slice(colon)}" is a tag, which names an image, not a repository: remove it`;
  }
  if (component.toLowerCase() !== component && /^[A-Za-z0-9._-]+$/.test(component)) {
    return `path component ${JSON.stringify(component)} must be lowercase: OCI repository names are lowercase`;
  }
  const bad = firstCharOutside(component, PATH_CHAR);
  if (bad) {
    return `path component ${JSON.stringify(component)} contains ${describeChar(bad.char)}: use lowercase letters, digits, ".", "_" and "-"`;
  }
  if (!PATH_COMPONENT.test(component)) {
    return (
      `path component ${JSON.stringify(component)} must start and end with a letter or digit, ` +
      'with letters and digits separated by one ".", one or two "_", or dashes'
    );
  }
  return undefined;
}

export const ociIdentityPlugin = defineIdentityPlugin({
  id: 'identity-oci',
  description:
    'Authority identities as OCI repository names of the registry this deployment serves.',
  options: ociIdentityOptions,
  create: (rng, options) => new OciIdentitySupplier(rng, options),
});
