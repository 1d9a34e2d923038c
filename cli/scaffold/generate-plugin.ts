import { join, relative, resolve } from 'node:path';
import { UsageError } from '../cli-errors.js';
import type { BatonPackage } from './baton-package.js';
import { camelCase, pascalCase, validateName } from './names.js';
import { PLUGIN_CONTRACTS, availableContracts, kebabCase, pluginClassName } from './plugin-contracts.js';
import { renderLayers } from './template-files.js';
import { withBatonDependencies } from './baton-dependencies.js';
import { writeProject } from './write-project.js';

export interface NewPluginRequest {
  name: string;
  contract: string;
  /** The implemented example instead of the failing stub (identity-supplier only). */
  example: boolean;
  /** Where to generate (default: ./NAME). */
  dir?: string;
  /** How the generated package.json depends on Baton (default: a relative `file:` path to this checkout). */
  batonDependency?: string;
  cwd: string;
}

export interface GeneratedProject {
  kind: 'plugin' | 'host';
  name: string;
  dir: string;
  files: string[];
  /** Commands to run next, from the directory the command was run in. */
  nextSteps: string[];
  /** What `npm test` does on the first run ("pass", or "fail until ..."). */
  firstTestRun: string;
  [detail: string]: unknown;
}

export async function generatePlugin(
  pkg: BatonPackage,
  request: NewPluginRequest,
): Promise<GeneratedProject> {
  const name = validateName('plugin', request.name);
  const contracts = availableContracts(pkg);
  const contract = contracts.find((c) => c.name === request.contract);
  const known = PLUGIN_CONTRACTS.find((c) => c.name === request.contract);
  if (!contract && known) {
    throw new UsageError(
      `contract ${known.name} is not available yet: this Baton has no plugin template for it, so there is nothing to generate; choose one of ${contracts.map((c) => c.name).join(', ')}`,
    );
  }
  if (!contract) {
    throw new UsageError(
      `unknown contract ${JSON.stringify(request.contract)}: choose one of ${contracts.map((c) => c.name).join(', ')}`,
    );
  }
  if (request.example && !contract.example) {
    const withExample = contracts.filter((c) => c.example).map((c) => c.name);
    throw new UsageError(
      `--example exists for ${withExample.join(', ')} only, not for ${contract.name}`,
    );
  }
  const className = pluginClassName(pascalCase(name), contract.title);
  const camelName = camelCase(kebabCase(className));
  const fileName = kebabCase(className);
  const dir = resolve(request.cwd, request.dir ?? name);
  const values = {
    ...dependencyVersions(pkg),
    name,
    pluginId: name,
    className,
    camelName,
    pluginConst: `${camelName}Plugin`,
    fileName,
    ecosystem: name.replace(/-identity(-supplier)?$/, '') || name,
    contract: contract.name,
    description: `${contract.title} plugin ${name}: ${contract.summary}.`,
  };
  const variant = request.example ? `${contract.name}-example` : contract.name;
  const layers = [
    join(pkg.templates, 'plugin', 'files', 'common'),
    join(pkg.templates, 'plugin', 'files', variant),
  ];
  const files = await writeProject(dir, withBatonDependencies(await renderLayers(layers, values), batonRange(pkg, request.batonDependency)));
  const where = relative(request.cwd, dir) || '.';
  return {
    kind: 'plugin',
    name,
    contract: contract.name,
    example: request.example,
    dir,
    files,
    firstTestRun: request.example
      ? 'pass: the example supplier is implemented'
      : `fail until src/${fileName}.ts is implemented: the conformance suite lists what the contract expects`,
    nextSteps: [`cd ${where}`, 'npm install', 'npm test'],
  };
}

/**
 * The versions a generated package.json asks for: the ones this Baton is built and tested with.
 * The @baton/* packages come from a registry like any dependency, at `batonRange`: a project
 * never depends on a path of this machine, so it installs wherever it is copied.
 */
export function dependencyVersions(pkg: BatonPackage): Record<string, string> {
  return {
    zodVersion: pkg.versionOf('zod'),
    avaVersion: pkg.versionOf('ava'),
    typescriptVersion: pkg.versionOf('typescript'),
    typesNodeVersion: pkg.versionOf('@types/node'),
  };
}

/** `--baton` when given, else compatible releases of this CLI's own version (`^0.1.0`). */
export function batonRange(pkg: BatonPackage, requested?: string): string {
  return requested ?? `^${pkg.version}`;
}
