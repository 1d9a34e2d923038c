import { rename, rm, writeFile } from 'node:fs/promises';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

/**
 * A started file store in a fresh temp directory, as the contract suites want it. It becomes
 * unavailable by a regular file taking the place of its directory, so every file operation fails.
 */
export async function fsStoreFixture<S extends { start(): Promise<void> }>(
  tempPrefix: string,
  create: (dir: string) => S,
) {
  const temp = await makeTempDir(tempPrefix);
  const dir = `${temp.path}/store`;
  const store = create(dir);
  await store.start();
  return {
    store,
    cleanup: temp.remove,
    makeUnavailable: async () => {
      await rename(dir, `${dir}.away`);
      await writeFile(dir, 'not a directory');
    },
    restore: async () => {
      await rm(dir);
      await rename(`${dir}.away`, dir);
    },
  };
}
