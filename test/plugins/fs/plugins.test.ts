import test from 'ava';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIT_STORE } from '@baton/contracts/internal/audit-store.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { auditRecord } from '@baton/conformance/internal/audit-store-suite.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { FsAuditStore } from '@baton/plugin-fs/internal/fs-audit-store.js';
import { FsObjectStore } from '@baton/plugin-fs/internal/fs-object-store.js';
import { fsAuditStorePlugin, fsObjectStorePlugin } from '@baton/plugin-fs/internal/plugins.js';

test('fs plugins › both stores can share one directory and start with the host', async (t) => {
  const temp = await makeTempDir('baton-fs-plugins');
  t.teardown(temp.remove);
  const dir = join(temp.path, 'data');
  const host = createHost()
    .add(fsObjectStorePlugin, { dir })
    .add(fsAuditStorePlugin, { dir })
    .build();
  await host.start();
  t.teardown(() => host.stop());
  await access(join(dir, 'objects'));
  await access(join(dir, 'audit', 'records'));
  const objects = host.get(OBJECT_STORE);
  const audit = host.get(AUDIT_STORE);
  t.true(objects instanceof FsObjectStore);
  t.true(audit instanceof FsAuditStore);
  await objects.put('k', new Uint8Array([1, 2]));
  await audit.put(auditRecord());
  t.deepEqual((await objects.list('')).objects, [{ key: 'k', size: 2 }], 'audit files are not objects');
  t.deepEqual(await audit.list('proj'), [auditRecord()]);
});

test('fs plugins › a missing dir option fails the build, naming the plugin and the option', (t) => {
  for (const plugin of [fsObjectStorePlugin, fsAuditStorePlugin]) {
    const error = t.throws(() => createHost().add(plugin, {}).build(), { instanceOf: WiringError });
    t.regex(error!.message, new RegExp(plugin.id));
    t.regex(error!.message, /dir/);
  }
});

test('fs plugins › an empty dir is refused with a hint', (t) => {
  const error = t.throws(() => createHost().add(fsObjectStorePlugin, { dir: '' }).build(), {
    instanceOf: WiringError,
  });
  t.regex(error!.message, /directory the store keeps its files in/);
});
