import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mustRun } from './processes.js';
import { CHECKOUT, publishedWorkspaces, type Workspace } from './workspaces.js';

export interface Tarball {
  workspace: Workspace;
  name: string;
  /** Paths inside the package, as npm packs them (`dist/index.js`). */
  files: Set<string>;
  unpackedSize: number;
}

/**
 * What `npm pack` would put in each published workspace's tarball (a dry run: nothing written),
 * with an empty user config, so no one's ~/.npmrc changes the answer.
 */
export async function packedTarballs(): Promise<Tarball[]> {
  const published = publishedWorkspaces();
  const scratch = await mkdtemp(join(tmpdir(), 'baton-pack-'));
  try {
    const userconfig = join(scratch, 'npmrc');
    await writeFile(userconfig, '');
    const flags = published.flatMap((w) => ['--workspace', w.folder]);
    const packed = await mustRun(
      'npm',
      ['pack', ...flags, '--dry-run', '--json', '--userconfig', userconfig],
      {
        cwd: CHECKOUT,
        timeoutMs: 120_000,
      },
    );
    const entries = JSON.parse(packed.stdout) as {
      name: string;
      unpackedSize: number;
      files: { path: string }[];
    }[];
    return entries.map((entry) => {
      const workspace = published.find((w) => w.manifest.name === entry.name);
      if (!workspace) throw new Error(`npm packed ${entry.name}, which is no published workspace`);
      return {
        workspace,
        name: entry.name,
        files: new Set(entry.files.map((f) => f.path)),
        unpackedSize: entry.unpackedSize,
      };
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The files a manifest names as entry points: declarations (`types`) and the rest. */
export function entryPoints(workspace: Workspace): { types: string[]; runtime: string[] } {
  const types: string[] = [];
  const runtime: string[] = [];
  const { manifest } = workspace;
  if (manifest.types) types.push(manifest.types);
  if (manifest.main) runtime.push(manifest.main);
  if (typeof manifest.bin === 'string') runtime.push(manifest.bin);
  else runtime.push(...Object.values(manifest.bin ?? {}));
  const visit = (value: unknown, condition: string | undefined) => {
    if (typeof value === 'string') (condition === 'types' ? types : runtime).push(value);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value))
        visit(inner, key.startsWith('.') ? condition : key);
    }
  };
  for (const [subpath, target] of Object.entries(
    (manifest.exports as Record<string, unknown> | undefined) ?? {},
  )) {
    // A pattern (`./internal/*`) names no one file.
    if (!subpath.includes('*')) visit(target, undefined);
  }
  const normal = (path: string) => path.replace(/^\.\//, '');
  return { types: [...new Set(types.map(normal))], runtime: [...new Set(runtime.map(normal))] };
}
