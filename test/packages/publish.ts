import { dirname, join } from 'node:path';
import { npm, type NpmClient } from './npm-client.js';
import { CHECKOUT, publishedWorkspaces } from './workspaces.js';

export interface PackedPackage {
  name: string;
  version: string;
  /** The tarball's path. */
  file: string;
}

/** Packs every published workspace (never a private one) into `destination`, as a release would. */
export async function packWorkspaces(
  client: NpmClient,
  destination: string,
): Promise<PackedPackage[]> {
  const flags = publishedWorkspaces().flatMap((w) => ['--workspace', w.folder]);
  const packed = await npm(client, CHECKOUT, [
    'pack',
    ...flags,
    '--pack-destination',
    destination,
    '--json',
  ]);
  const entries = JSON.parse(packed.stdout) as {
    name: string;
    version: string;
    filename: string;
  }[];
  return entries.map((e) => ({
    name: e.name,
    version: e.version,
    file: join(destination, e.filename),
  }));
}

/** Publishes each tarball to the client's registry, a few at a time. */
export async function publishTarballs(
  client: NpmClient,
  packages: readonly PackedPackage[],
): Promise<void> {
  const queue = [...packages];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      await npm(client, dirname(next.file), ['publish', next.file, '--tag', 'latest']);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** The versions the registry holds of a package (none when it does not know it). */
export async function publishedVersions(client: NpmClient, name: string): Promise<string[]> {
  const response = await fetch(`${client.registry}${name.replace('/', '%2f')}`, {
    headers: { accept: 'application/vnd.npm.install-v1+json' },
  });
  if (response.status === 404) return [];
  const body = (await response.json()) as { versions?: Record<string, unknown> };
  return Object.keys(body.versions ?? {});
}
