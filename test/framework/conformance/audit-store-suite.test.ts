import test from 'ava';
import type { AuditRecord, AuditStore } from '@baton/contracts/internal/audit-store.js';
import { auditStoreSuite } from '@baton/conformance/internal/audit-store-suite.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import { attemptPasses, collectSuite, findTest } from './collect-suite.js';

// Each store below breaks one rule of the contract; the suite must notice.

class AlwaysCreated extends MemoryAuditStore {
  override async put(record: AuditRecord): Promise<{ created: boolean }> {
    await super.put(record);
    return { created: true };
  }
}

/** Keys records by id only: a different record at a taken (authority, commit_index) is stored. */
class IdentityById implements AuditStore {
  private readonly records = new Map<string, AuditRecord>();
  async put(record: AuditRecord) {
    const created = !this.records.has(record.id);
    this.records.set(record.id, { ...record });
    return { created };
  }
  async byId(id: string) {
    const r = this.records.get(id);
    return r && { ...r };
  }
  async latest(authority: string) {
    return (await this.list(authority))[0];
  }
  async list(authority: string, options: { limit?: number } = {}) {
    return [...this.records.values()]
      .filter((r) => r.authority === authority)
      .sort((a, b) => b.commit_index - a.commit_index)
      .slice(0, options.limit ?? 100)
      .map((r) => ({ ...r }));
  }
}

/** Treats authorities as case-insensitive: "PROJ" and "proj" collide. */
class CaseFoldsAuthorities extends MemoryAuditStore {
  override put(record: AuditRecord) {
    return super.put({ ...record, authority: record.authority.toLowerCase() });
  }
  override latest(authority: string) {
    return super.latest(authority.toLowerCase());
  }
  override list(authority: string, options?: { limit?: number }) {
    return super.list(authority.toLowerCase(), options);
  }
}

class LatestIsLastWritten extends MemoryAuditStore {
  private last = new Map<string, AuditRecord>();
  override async put(record: AuditRecord) {
    const result = await super.put(record);
    this.last.set(record.authority, { ...record });
    return result;
  }
  override async latest(authority: string) {
    return this.last.get(authority);
  }
}

class ListOldestFirst extends MemoryAuditStore {
  override async list(authority: string, options: { limit?: number } = {}) {
    return (await super.list(authority, { limit: 1_000_000 })).reverse().slice(0, options.limit ?? 100);
  }
}

class NoDefaultLimit extends MemoryAuditStore {
  override list(authority: string, options: { limit?: number } = {}) {
    return super.list(authority, { limit: options.limit ?? 1_000_000 });
  }
}

class HandsOutStoredRecords extends MemoryAuditStore {
  private held = new Map<string, AuditRecord>();
  override async put(record: AuditRecord) {
    const result = await super.put(record);
    if (result.created) this.held.set(record.id, record);
    return result;
  }
  override async byId(id: string) {
    return this.held.get(id);
  }
}

const mutants: { store: () => AuditStore; breaks: string }[] = [
  { store: () => new AlwaysCreated(), breaks: 'the identical record again is not created' },
  { store: () => new IdentityById(), breaks: 'same (authority, commit_index) is a conflict' },
  { store: () => new CaseFoldsAuthorities(), breaks: 'authorities are kept apart' },
  { store: () => new LatestIsLastWritten(), breaks: 'latest is the highest commit_index' },
  { store: () => new ListOldestFirst(), breaks: 'list is newest first' },
  { store: () => new NoDefaultLimit(), breaks: 'at most 100 records by default' },
  { store: () => new HandsOutStoredRecords(), breaks: 'records are copies' },
];

for (const { store, breaks } of mutants) {
  test(`auditStoreSuite › fails a store that breaks "${breaks}" (${store().constructor.name})`, async (t) => {
    const tests = collectSuite((suiteTest) =>
      auditStoreSuite({ test: suiteTest, name: 'broken', factory: () => ({ store: store() }) }),
    );
    t.false(await attemptPasses(t, findTest(tests, breaks)));
  });
}

test('auditStoreSuite › fails a store that answers "absent" during an outage', async (t) => {
  const tests = collectSuite((suiteTest) =>
    auditStoreSuite({
      test: suiteTest,
      name: 'broken',
      factory: () => {
        const store = new MemoryAuditStore();
        let down = false;
        const lying: AuditStore = {
          put: (r) => store.put(r),
          byId: (id) => store.byId(id),
          latest: async (a) => (down ? undefined : store.latest(a)),
          list: (a, o) => store.list(a, o),
        };
        return {
          store: lying,
          makeUnavailable: () => {
            down = true;
            store.failWith(new Error('down'));
          },
          restore: () => {
            down = false;
            store.failWith(undefined);
          },
        };
      },
    }),
  );
  t.false(await attemptPasses(t, findTest(tests, 'while unavailable')));
});

test('auditStoreSuite › passes the reference store on every test (the harness works)', async (t) => {
  const tests = collectSuite((suiteTest) =>
    auditStoreSuite({ test: suiteTest, name: 'reference', factory: () => ({ store: new MemoryAuditStore() }) }),
  );
  t.true(tests.length >= 12, `collected ${tests.length} tests`);
  for (const collected of tests) t.true(await attemptPasses(t, collected), collected.title);
});
