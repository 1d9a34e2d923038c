import test from 'ava';
import { AUDIT_STORE } from '@baton/contracts/internal/audit-store.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { auditRecord } from '@baton/conformance/internal/audit-store-suite.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';
import { memoryAuditStorePlugin, memoryObjectStorePlugin } from '@baton/plugin-memory/internal/plugins.js';

test('memory plugins › a host provides one working store per token', async (t) => {
  const host = createHost().add(memoryObjectStorePlugin).add(memoryAuditStorePlugin).build();
  await host.start();
  t.teardown(() => host.stop());
  const objects = host.get(OBJECT_STORE);
  const audit = host.get(AUDIT_STORE);
  t.true(objects instanceof MemoryObjectStore);
  t.true(audit instanceof MemoryAuditStore);
  t.is(host.get(OBJECT_STORE), objects, 'one instance per host');
  await objects.put('k', new Uint8Array([1, 2, 3]));
  t.deepEqual(await objects.get('k'), new Uint8Array([1, 2, 3]));
  t.deepEqual(await audit.put(auditRecord()), { created: true });
});

test('memory plugins › two hosts do not share data', async (t) => {
  const first = createHost().add(memoryObjectStorePlugin).build();
  const second = createHost().add(memoryObjectStorePlugin).build();
  await first.get(OBJECT_STORE).put('k', new Uint8Array([1]));
  t.is(await second.get(OBJECT_STORE).get('k'), undefined);
});

test('memory plugins › unknown options are refused, naming the plugin', (t) => {
  const error = t.throws(() => createHost().add(memoryObjectStorePlugin, { dir: '/tmp' }).build(), {
    instanceOf: WiringError,
  });
  t.regex(error!.message, /memory-object-store/);
});
