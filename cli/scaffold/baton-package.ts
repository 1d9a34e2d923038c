import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BatonPackage {
  /** Absolute path of the Baton checkout (the directory of its package.json). */
  root: string;
  /** Absolute path of its templates/ directory. */
  templates: string;
  version: string;
  /** Version ranges Baton itself uses, so a generated project asks for the same ones. */
  versionOf(dependency: string): string;
}

/**
 * Finds the Baton package this CLI belongs to by walking up from the running file to the first
 * package.json named "baton": the same answer from cli/ (sources) and dist/cli/ (compiled).
 */
export function findBatonPackage(from = fileURLToPath(import.meta.url)): BatonPackage {
  let dir = dirname(from);
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
        name?: string;
        version?: string;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      if (pkg.name === 'baton') {
        const ranges = { ...pkg.devDependencies, ...pkg.dependencies };
        return {
          root: dir,
          templates: join(dir, 'templates'),
          version: pkg.version ?? '0.0.0',
          versionOf: (dependency) => {
            const range = ranges[dependency];
            if (!range)
              throw new Error(
                `baton's package.json does not list ${dependency}, which the templates need`,
              );
            return range;
          },
        };
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find Baton's package.json above ${from}`);
    dir = parent;
  }
}
