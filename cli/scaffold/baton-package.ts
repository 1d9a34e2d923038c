import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BatonPackage {
  /** Absolute path of the @baton/cli package (the directory of its package.json). */
  cli: string;
  /** The Baton workspace checkout this CLI runs from, if it runs from one (not from an install). */
  checkout?: string;
  /** Absolute path of the @baton/templates package: host/ and plugin/ template trees. */
  templates: string;
  /** Absolute path of @baton/conformance, whose suites the plugin templates run; absent if not installed. */
  conformance?: string;
  /** The version of this CLI, which every @baton/* package of a release shares. */
  version: string;
  /** Version ranges a generated project asks for (`zod`, `ava`, `typescript`, `@types/node`). */
  versionOf(dependency: string): string;
}

interface Manifest {
  name?: string;
  version?: string;
  workspaces?: unknown;
  devDependencies?: Record<string, string>;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** The nearest directory at or above `from` holding a package.json that `accept` takes. */
function packageDirAbove(from: string, accept: (manifest: Manifest) => boolean): string | undefined {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && accept(readManifest(dir))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The directory of an installed package, found as Node finds it from this module. */
function installedPackageDir(name: string): string | undefined {
  try {
    return dirname(fileURLToPath(import.meta.resolve(`${name}/package.json`)));
  } catch {
    return undefined;
  }
}

/**
 * Finds the packages this CLI generates projects from: its own (@baton/cli), @baton/templates
 * and @baton/conformance, resolved as Node resolves them, so the same answer comes from a
 * checkout (workspace links) and from an install out of a registry.
 */
export function findBatonPackage(from = fileURLToPath(import.meta.url)): BatonPackage {
  const cli = packageDirAbove(dirname(from), (m) => m.name === '@baton/cli');
  if (!cli) throw new Error(`cannot find the package.json of @baton/cli above ${from}`);
  const templates = installedPackageDir('@baton/templates');
  if (!templates) throw new Error('@baton/templates is not installed beside @baton/cli: reinstall @baton/cli');
  const manifest = readManifest(templates);
  const ranges = manifest.devDependencies ?? {};
  return {
    cli,
    checkout: packageDirAbove(dirname(cli), (m) => m.name === 'baton' && m.workspaces !== undefined),
    templates,
    conformance: installedPackageDir('@baton/conformance'),
    version: readManifest(cli).version ?? '0.0.0',
    versionOf: (dependency) => {
      const range = ranges[dependency];
      if (!range) throw new Error(`@baton/templates does not list ${dependency}, which the templates need`);
      return range;
    },
  };
}
