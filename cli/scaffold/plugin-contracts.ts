import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BatonPackage } from './baton-package.js';

/** A contract a plugin can be generated for, and what the generator needs to know about it. */
export interface PluginContract {
  /** The value of `--contract`, also the name of the template directory. */
  name: string;
  /** The interface's name, appended to the plugin's class name. */
  title: string;
  summary: string;
  /** The module of @baton/conformance with the suite the generated test runs. */
  suite: string;
  /** A template implemented with a trivial example (`--example`) exists for this contract. */
  example: boolean;
}

export const PLUGIN_CONTRACTS: readonly PluginContract[] = [
  {
    name: 'object-store',
    title: 'ObjectStore',
    summary: 'durable bytes by key (where stream records live)',
    suite: 'object-store-suite.js',
    example: false,
  },
  {
    name: 'audit-store',
    title: 'AuditStore',
    summary: "the durable audit trail of a member's authority transfers",
    suite: 'audit-store-suite.js',
    example: false,
  },
  {
    name: 'identity-supplier',
    title: 'IdentitySupplier',
    summary: 'opaque authority and operation identities for one ecosystem',
    suite: 'identity-supplier-suite.js',
    example: true,
  },
  {
    name: 'consensus',
    title: 'MetadataConsensus',
    summary: 'replicates the deterministic state machine of a variant',
    suite: 'consensus-suite.js',
    example: false,
  },
];

/**
 * The contracts that can be generated from this Baton: a template directory must exist, and the
 * conformance suite it wires in too when @baton/conformance is here to look in (a template whose
 * suite is missing could not compile). Without it installed the generated project brings its own.
 */
export function availableContracts(pkg: BatonPackage): PluginContract[] {
  return PLUGIN_CONTRACTS.filter(
    (contract) =>
      existsSync(join(pkg.templates, 'plugin', 'files', contract.name)) &&
      (pkg.conformance === undefined || existsSync(join(pkg.conformance, 'dist', contract.suite))),
  );
}

/** The class name for a plugin: its name in PascalCase, ending with the contract's interface name. */
export function pluginClassName(pascalName: string, title: string): string {
  const nameWords = pascalName.match(/[A-Z][a-z0-9]*/g) ?? [pascalName];
  const titleWords = title.match(/[A-Z][a-z0-9]*/g) ?? [title];
  // `AcmeIdentity` + `IdentitySupplier` -> `AcmeIdentitySupplier`, not `AcmeIdentityIdentitySupplier`.
  for (let overlap = Math.min(nameWords.length, titleWords.length); overlap > 0; overlap--) {
    if (nameWords.slice(-overlap).join('') === titleWords.slice(0, overlap).join('')) {
      return [...nameWords, ...titleWords.slice(overlap)].join('');
    }
  }
  return pascalName + title;
}

/** `AcmeObjectStore` -> `acme-object-store`. */
export function kebabCase(pascal: string): string {
  return pascal.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}
