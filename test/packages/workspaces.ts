import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Baton checkout these tests run from (they are compiled into its dist/test/packages/). */
export const CHECKOUT = fileURLToPath(new URL('../../../', import.meta.url));

export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  types?: string;
  main?: string;
  bin?: string | Record<string, string>;
  exports?: unknown;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface Workspace {
  /** The folder, relative to the checkout (`framework/kernel`). */
  folder: string;
  dir: string;
  manifest: Manifest;
}

/** Every workspace of the checkout's package.json, in its order. */
export function workspaces(): Workspace[] {
  const root = JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  return root.workspaces.map((folder) => {
    const dir = join(CHECKOUT, folder);
    return {
      folder,
      dir,
      manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest,
    };
  });
}

/** The workspaces a release publishes: all but the private ones (@baton/testing). */
export function publishedWorkspaces(): Workspace[] {
  return workspaces().filter((w) => w.manifest.private !== true);
}
