import test from 'ava';
import { InvalidAuditRecordError, StoreUnavailableError } from '@baton/contracts/internal/audit-store.js';
import { auditRecord, auditStoreSuite } from '@baton/conformance/internal/audit-store-suite.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';

auditStoreSuite({
  test,
  name: 'memory audit store',
  factory: () => {
    const store = new MemoryAuditStore();
    return {
      store,
      makeUnavailable: () => store.failWith(new StoreUnavailableError('memory audit store', 'taken down by the test')),
      restore: () => store.failWith(undefined),
    };
  },
});

test('memory audit store › a record with a non-integer commit_index is refused', async (t) => {
  const store = new MemoryAuditStore();
  for (const commit_index of [-1, 1.5, Number.NaN, '7' as unknown as number]) {
    await t.throwsAsync(store.put(auditRecord({ commit_index })), { instanceOf: InvalidAuditRecordError, message: /commit_index/ });
  }
  t.deepEqual(await store.list('proj'), []);
});

test('memory audit store › a record with a missing text field is refused', async (t) => {
  const store = new MemoryAuditStore();
  const { actor: _actor, ...withoutActor } = auditRecord();
  await t.throwsAsync(store.put(withoutActor as never), { instanceOf: InvalidAuditRecordError, message: /actor/ });
});
