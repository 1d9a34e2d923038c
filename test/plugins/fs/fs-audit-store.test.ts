import test from 'ava';
import { rename, rm, writeFile } from 'node:fs/promises';
import { auditStoreSuite } from '../../../framework/testing/audit-store-suite.js';
import { makeTempDir } from '../../../framework/testing/temp-dir.js';
import { FsAuditStore } from '../../../plugins/fs/fs-audit-store.js';

auditStoreSuite({
  test,
  name: 'fs audit store',
  factory: async () => {
    const temp = await makeTempDir('baton-fs-audit');
    const dir = `${temp.path}/store`;
    const store = new FsAuditStore({ dir });
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
