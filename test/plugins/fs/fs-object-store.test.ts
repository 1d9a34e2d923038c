import test from 'ava';
import { rename, rm, writeFile } from 'node:fs/promises';
import { objectStoreSuite } from '../../../framework/testing/object-store-suite.js';
import { makeTempDir } from '../../../framework/testing/temp-dir.js';
import { FsObjectStore } from '../../../plugins/fs/fs-object-store.js';

objectStoreSuite({
  test,
  name: 'fs object store',
  supports: { conditionalPut: true },
  factory: async () => {
    const temp = await makeTempDir('baton-fs-objects');
    const dir = `${temp.path}/store`;
    const store = new FsObjectStore({ dir });
    await store.start();
    return {
      store,
      cleanup: temp.remove,
      // A regular file where the store's directory was: every file operation fails.
      makeUnavailable: async () => {
        await rename(dir, `${dir}.away`);
        await writeFile(dir, 'not a directory');
      },
      restore: async () => {
        await rm(dir);
        await rename(`${dir}.away`, dir);
      },
    };
  },
});
