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
  /** The conformance suite the generated test runs: without it there is no template. */
  suite: string;
  /** A template implemented with a trivial example (`--example`) exists for this contract. */
  example: boolean;
}

export const PLUGIN_CONTRACTS: readonly PluginContract[] = [
  {
    name: 'object-store',
    title: 'ObjectStore',
    summary: 'durable bytes by key (where stream records live)',
    suite: 'framework/testing/object-store-suite.ts',
    example: false,
  },
  {
    name: 'audit-store',
    title: 'AuditStore',
    summary: "the durable audit trail of a member's authority transfers",
    suite: 'framework/testing/audit-store-suite.ts',
    example: false,
  },
  {
    name: 'identity-supplier',
    title: 'IdentitySupplier',
    summary: 'opaque authority and operation identities for one ecosystem',
    suite: 'framework/testing/identity-supplier-suite.ts',
    example: true,
  },
  {
    name: 'consensus',
    title: 'MetadataConsensus',
    summary: 'replicates the deterministic state machine of a variant',
    suite: 'framework/testing/consensus-suite.ts',
    example: false,
  },
];

/**
 * The contracts that can be generated from this Baton: a template directory and the conformance
 * suite it wires in must both exist (a template whose suite is missing could not compile).
 */
export function availableContracts(pkg: BatonPackage): PluginContract[] {
  return PLUGIN_CONTRACTS.filter(
    (contract) =>
      existsSync(join(pkg.templates, 'plugin', 'files', contract.name)) &&
      (existsSync(join(pkg.root, contract.suite)) ||
        existsSync(join(pkg.root, 'dist', contract.suite.replace(/\.ts$/, '.js')))),
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
