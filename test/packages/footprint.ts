import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface Footprint {
  /** The name of every package installed under node_modules, nested ones too (a name twice when installed twice). */
  packages: string[];
  /** Unpacked size of all of them: the bytes of their files. */
  bytes: number;
  /** The @baton/* part. */
  baton: { packages: string[]; bytes: number };
}

/** Bytes of the files under `dir`, leaving out its own node_modules (counted as packages). */
async function filesSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await filesSize(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}

/** What an install put in `project/node_modules`: each package directory, however deep, and its size. */
export async function measureInstall(project: string): Promise<Footprint> {
  const found: { name: string; bytes: number }[] = [];
  const walk = async (modules: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(modules, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(modules, entry.name);
      const dirs = entry.name.startsWith('@')
        ? (await readdir(path, { withFileTypes: true }))
            .filter((e) => e.isDirectory())
            .map((e) => [`${entry.name}/${e.name}`, join(path, e.name)])
        : entry.isDirectory()
          ? [[entry.name, path]]
          : [];
      for (const [name, dir] of dirs) {
        found.push({ name, bytes: await filesSize(dir) });
        await walk(join(dir, 'node_modules'));
      }
    }
  };
  await walk(join(project, 'node_modules'));
  const baton = found.filter((p) => p.name.startsWith('@baton/'));
  const sum = (list: typeof found) => list.reduce((total, p) => total + p.bytes, 0);
  return {
    packages: found.map((p) => p.name).sort(),
    bytes: sum(found),
    baton: { packages: baton.map((p) => p.name).sort(), bytes: sum(baton) },
  };
}

export const megabytes = (bytes: number): string => `${(bytes / 1_000_000).toFixed(2)} MB`;

/** One line for the test log and the README table. */
export function describeFootprint(label: string, footprint: Footprint): string {
  return (
    `${label}: ${footprint.packages.length} packages, ${megabytes(footprint.bytes)} unpacked; ` +
    `Baton's own ${footprint.baton.packages.length} packages ${megabytes(footprint.baton.bytes)}`
  );
}
