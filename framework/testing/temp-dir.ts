import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  /** Absolute path of a fresh, empty directory that nothing else uses. */
  readonly path: string;
  /** Removes the directory and everything in it; safe to call more than once. */
  remove(): Promise<void>;
}

/**
 * A fresh directory under the OS temp dir, so each test (and each factory call of a conformance
 * suite) works on its own files and parallel tests never see each other's data.
 */
export async function makeTempDir(label = 'baton'): Promise<TempDir> {
  const safeLabel = label.replace(/[^a-zA-Z0-9_-]/g, '-');
  const path = await mkdtemp(join(tmpdir(), `${safeLabel}-`));
  return {
    path,
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
