import type { ExecutionContext, TestFn } from 'ava';
import {
  AuditConflictError,
  StoreUnavailableError,
  type AuditRecord,
  type AuditStore,
} from '@baton/contracts';

/** One isolated, empty store, made fresh for each test of the suite. */
export interface AuditStoreFixture {
  store: AuditStore;
  /** Releases what the store holds (temp dir, Redis prefix...). Runs after the test. */
  cleanup?: () => Promise<void> | void;
  /** Takes the store down so that every operation raises StoreUnavailableError. */
  makeUnavailable?: () => Promise<void> | void;
  /** Brings the store back after makeUnavailable, with the records it held before. */
  restore?: () => Promise<void> | void;
}

export interface AuditStoreSuiteOptions {
  /** ava's `test` function of the calling test file. */
  test: TestFn;
  /** Prefixes every test title, so several implementations can run in one process. */
  name: string;
  factory: () => Promise<AuditStoreFixture> | AuditStoreFixture;
}

/** A complete record, seed 003's example, with the given fields replaced. */
export function auditRecord(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: '5f0c-drain-proj',
    authority: 'proj',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    reason: 'drain east',
    barrier: 4821,
    epoch: 7,
    commit_term: 12,
    commit_index: 9043,
    ...overrides,
  };
}

/**
 * The conformance suite of the AuditStore contract (framework/contracts/audit-store.ts): every
 * implementation runs it, then adds the tests that only make sense for itself.
 */
export function auditStoreSuite(options: AuditStoreSuiteOptions): void {
  const { test, name, factory } = options;
  const title = (what: string) => `${name} › ${what}`;

  const open = async (t: ExecutionContext): Promise<AuditStoreFixture> => {
    const fixture = await factory();
    if (fixture.cleanup) t.teardown(fixture.cleanup);
    return fixture;
  };
  const openStore = async (t: ExecutionContext): Promise<AuditStore> => (await open(t)).store;

  test(title('put creates a record once; the identical record again is not created'), async (t) => {
    const store = await openStore(t);
    t.deepEqual(await store.put(auditRecord()), { created: true });
    t.deepEqual(await store.put(auditRecord()), { created: false }, 'an equal copy of the record');
    t.deepEqual(await store.put(auditRecord()), { created: false }, 'and again');
    t.deepEqual(await store.list('proj'), [auditRecord()], 'still one record');
  });

  test(title('a record round-trips field for field'), async (t) => {
    const store = await openStore(t);
    const record = auditRecord({
      id: 'op/ünïcødé "quoted" \\ 😀',
      authority: '@scope/pkg',
      source: 'dc-east-1',
      target: 'dc-west-2',
      actor: 'svc:deploy@example.org',
      reason: 'line one\nline two\ttabbed, and "quotes"',
      barrier: Number.MAX_SAFE_INTEGER,
      epoch: 0,
      commit_term: 1,
      commit_index: 0,
    });
    await store.put(record);
    t.deepEqual(await store.byId(record.id), record);
    t.deepEqual(await store.latest(record.authority), record);
    t.deepEqual(await store.list(record.authority), [record]);
    const emptyReason = auditRecord({ id: 'empty-reason', reason: '', commit_index: 1 });
    await store.put(emptyReason);
    t.deepEqual(await store.byId('empty-reason'), emptyReason, 'an empty reason stays empty');
  });

  test(title('a different record at the same (authority, commit_index) is a conflict'), async (t) => {
    const store = await openStore(t);
    const original = auditRecord();
    await store.put(original);
    const variants: Partial<AuditRecord>[] = [
      { epoch: 8 },
      { target: 'north' },
      { reason: 'drain east ' },
      { commit_term: 13 },
      { id: 'another-transfer' },
    ];
    for (const change of variants) {
      const error = await t.throwsAsync(store.put(auditRecord(change)), { instanceOf: AuditConflictError });
      t.is(error?.code, 'audit_conflict', JSON.stringify(change));
    }
    t.deepEqual(await store.byId(original.id), original, 'the stored record is unchanged');
    t.deepEqual(await store.latest('proj'), original);
    t.deepEqual(await store.list('proj'), [original]);
    t.is(await store.byId('another-transfer'), undefined, 'the refused record is not findable by its id');
  });

  test(title('one transfer id at another position is a conflict'), async (t) => {
    const store = await openStore(t);
    const original = auditRecord();
    await store.put(original);
    await t.throwsAsync(store.put(auditRecord({ commit_index: 9100 })), { instanceOf: AuditConflictError });
    await t.throwsAsync(store.put(auditRecord({ authority: 'other', commit_index: 5 })), {
      instanceOf: AuditConflictError,
    });
    t.deepEqual(await store.byId(original.id), original);
    t.deepEqual(await store.list('proj'), [original]);
    t.deepEqual(await store.list('other'), []);
  });

  test(title('the trail fields (kind, subject, cause, chain hashes...) round-trip; unknown fields are dropped'), async (t) => {
    const store = await openStore(t);
    const record = auditRecord({
      id: '41-0',
      authority: 'streams',
      seq: 0,
      kind: 'transfer_proposed',
      subject_type: 'stream',
      subject: 'orders-7',
      epoch_before: 3,
      cause: '40-0',
      evidence: 'silent for 9000 ms',
      time: 1_764_000_000_000,
      prev_hash: 'ab'.repeat(32),
      hash: 'cd'.repeat(32),
      commit_index: 41,
    });
    await store.put({ ...record, unknown: 'dropped' } as AuditRecord);
    t.deepEqual(await store.byId(record.id), record);
    t.deepEqual(await store.list('streams'), [record]);
    const tampered = { ...record, cause: '39-0' };
    await t.throwsAsync(store.put(tampered), { instanceOf: AuditConflictError }, 'a trail field is part of the sealed record');
  });

  test(title('records one entry sealed differ by seq: each is kept, listed by (commit_index, seq) newest first'), async (t) => {
    const store = await openStore(t);
    const at = (commit_index: number, seq: number) =>
      auditRecord({ id: `${commit_index}-${seq}`, authority: 'streams', commit_index, seq, subject: `s${seq}` });
    const all = [at(7, 0), at(7, 1), at(7, 2), at(9, 0), at(9, 1), at(12, 0)];
    for (const record of [all[4], all[1], all[5], all[0], all[3], all[2]]) t.deepEqual(await store.put(record), { created: true });
    t.deepEqual(await store.put(at(7, 1)), { created: false }, 'the same record at the same seq');
    await t.throwsAsync(store.put({ ...at(7, 1), subject: 'other' }), { instanceOf: AuditConflictError });
    const newest = [...all].reverse();
    t.deepEqual(await store.list('streams'), newest);
    t.deepEqual(await store.latest('streams'), at(12, 0));
    t.deepEqual(await store.list('streams', { limit: 2 }), newest.slice(0, 2));
    t.deepEqual(await store.list('streams', { before: 9, beforeSeq: 1, limit: 2 }), [at(9, 0), at(7, 2)], 'a cursor inside an entry');
    const paged: AuditRecord[] = [];
    let cursor: { before?: number; beforeSeq?: number } = {};
    for (;;) {
      const page = await store.list('streams', { ...cursor, limit: 2 });
      if (page.length === 0) break;
      paged.push(...page);
      const last = page.at(-1)!;
      cursor = { before: last.commit_index, beforeSeq: last.seq ?? 0 };
    }
    t.deepEqual(paged, newest, 'pages of two, each resuming at the last position given, cover the trail once');
  });

  test(title('byId finds a record by transfer id; an unknown id answers undefined'), async (t) => {
    const store = await openStore(t);
    t.is(await store.byId('nothing'), undefined, 'an empty store');
    const a = auditRecord({ id: 'transfer-a', commit_index: 10 });
    const b = auditRecord({ id: 'transfer-b', authority: 'other', commit_index: 10 });
    await store.put(a);
    await store.put(b);
    t.deepEqual(await store.byId('transfer-a'), a);
    t.deepEqual(await store.byId('transfer-b'), b);
    t.is(await store.byId('transfer-c'), undefined);
    t.is(await store.byId('transfer'), undefined, 'a prefix of an id is not an id');
  });

  test(title('latest is the highest commit_index, whatever the insertion order'), async (t) => {
    const store = await openStore(t);
    const at = (commit_index: number) => auditRecord({ id: `t-${commit_index}`, commit_index, epoch: commit_index });
    await store.put(at(50));
    await store.put(at(90));
    await store.put(at(20));
    t.deepEqual(await store.latest('proj'), at(90));
    await store.put(at(120));
    t.deepEqual(await store.latest('proj'), at(120));
    await store.put(at(70));
    t.deepEqual(await store.latest('proj'), at(120), 'a late older record does not become latest');
    await store.put(at(9));
    t.deepEqual(await store.latest('proj'), at(120), 'indexes compare as numbers, not as text ("9" > "120")');
  });

  test(title('list is newest first and honours limit'), async (t) => {
    const store = await openStore(t);
    const indexes = [7, 1000, 3, 99, 250, 12, 8];
    for (const commit_index of indexes) await store.put(auditRecord({ id: `t-${commit_index}`, commit_index }));
    const newestFirst = [...indexes].sort((a, b) => b - a);
    t.deepEqual(
      (await store.list('proj')).map((r) => r.commit_index),
      newestFirst,
    );
    t.deepEqual(
      (await store.list('proj', { limit: 3 })).map((r) => r.commit_index),
      newestFirst.slice(0, 3),
    );
    t.deepEqual((await store.list('proj', { limit: 1 })).map((r) => r.id), ['t-1000']);
    t.deepEqual(await store.list('proj', { limit: 100 }), await store.list('proj'));
  });

  test(title('list pages through a history of any length with before (the last commit_index given)'), async (t) => {
    const store = await openStore(t);
    const indexes = [7, 1000, 3, 99, 250, 12, 8, 120];
    for (const commit_index of indexes) await store.put(auditRecord({ id: `t-${commit_index}`, commit_index }));
    await store.put(auditRecord({ id: 'other-5', authority: 'other', commit_index: 5 }));
    const pages: number[][] = [];
    let before: number | undefined;
    for (;;) {
      const page = await store.list('proj', { limit: 3, ...(before === undefined ? {} : { before }) });
      if (page.length === 0) break;
      pages.push(page.map((r) => r.commit_index));
      before = page[page.length - 1].commit_index;
    }
    t.deepEqual(pages, [[1000, 250, 120], [99, 12, 8], [7, 3]], 'every record once, newest first, no other authority');
    t.deepEqual((await store.list('proj', { before: 100 })).map((r) => r.commit_index), [99, 12, 8, 7, 3], 'before excludes itself and what is newer');
    t.deepEqual(await store.list('proj', { before: 3 }), [], 'nothing is older than the oldest');
    t.deepEqual((await store.list('proj', { before: 0 })).length, 0);
    await t.throwsAsync(store.list('proj', { before: -1 }), { instanceOf: RangeError });
    await t.throwsAsync(store.list('proj', { before: 1.5 }), { instanceOf: RangeError });
  });

  test(title('list returns at most 100 records by default'), async (t) => {
    const store = await openStore(t);
    for (let commit_index = 1; commit_index <= 101; commit_index++) {
      await store.put(auditRecord({ id: `t-${commit_index}`, commit_index }));
    }
    const page = await store.list('proj');
    t.is(page.length, 100);
    t.is(page[0].commit_index, 101);
    t.is(page[99].commit_index, 2, 'the oldest record is the one left out');
    t.is((await store.list('proj', { limit: 500 })).length, 101);
  });

  test(title('an unknown authority has no latest and an empty list'), async (t) => {
    const store = await openStore(t);
    t.is(await store.latest('proj'), undefined, 'an empty store');
    t.deepEqual(await store.list('proj'), []);
    await store.put(auditRecord());
    t.is(await store.latest('unknown'), undefined);
    t.deepEqual(await store.list('unknown'), []);
    t.is(await store.latest('pro'), undefined, 'a prefix of a known authority is another authority');
    t.deepEqual(await store.list('proj/'), []);
  });

  test(title('authorities are kept apart, even at equal commit_index'), async (t) => {
    const store = await openStore(t);
    const authorities = ['proj', 'proj/sub', 'pro', 'PROJ', 'ghcr.io/org/repo', '@scope/pkg', 'ünï cødé'];
    for (const [i, authority] of authorities.entries()) {
      t.deepEqual(await store.put(auditRecord({ id: `same-index-${i}`, authority, commit_index: 500 })), {
        created: true,
      });
      await store.put(auditRecord({ id: `own-${i}`, authority, commit_index: 600 + i }));
    }
    for (const [i, authority] of authorities.entries()) {
      t.deepEqual(
        (await store.list(authority)).map((r) => r.id),
        [`own-${i}`, `same-index-${i}`],
        `history of ${authority}`,
      );
      t.is((await store.latest(authority))?.id, `own-${i}`);
    }
  });

  test(title('records are copies: mutating one changes nothing stored'), async (t) => {
    const store = await openStore(t);
    const record = auditRecord();
    await store.put(record);
    record.reason = 'changed by the caller after put';
    const read = await store.byId('5f0c-drain-proj');
    t.is(read?.reason, 'drain east');
    read!.epoch = 99;
    t.is((await store.latest('proj'))?.epoch, 7);
  });

  test(title('concurrent puts of one identity: one creates, the rest agree or conflict'), async (t) => {
    const store = await openStore(t);
    const same = await Promise.all(Array.from({ length: 8 }, () => store.put(auditRecord())));
    t.is(same.filter((r) => r.created).length, 1, 'exactly one identical put reports created');

    const contenders = Array.from({ length: 8 }, (_, i) =>
      auditRecord({ id: `contender-${i}`, authority: 'raced', commit_index: 1, epoch: i }),
    );
    const results = await Promise.allSettled(contenders.map((r) => store.put(r)));
    const winners = contenders.filter((_, i) => results[i].status === 'fulfilled');
    t.is(winners.length, 1, 'exactly one of several different records at one identity is stored');
    for (const r of results) {
      if (r.status === 'rejected') t.true(r.reason instanceof AuditConflictError, String(r.reason));
    }
    t.deepEqual(await store.latest('raced'), winners[0]);
    t.deepEqual(await store.list('raced'), [winners[0]]);
  });

  test(title('while unavailable every operation raises StoreUnavailableError, then recovers'), async (t) => {
    const { store, makeUnavailable, restore } = await open(t);
    if (!makeUnavailable || !restore) {
      // The factory cannot take this store down: the check is left to the store's own tests.
      t.log(`${name}: the factory offers no makeUnavailable/restore, so outages are not checked here`);
      t.is(makeUnavailable, undefined, 'makeUnavailable without restore');
      t.is(restore, undefined, 'restore without makeUnavailable');
      return;
    }
    const before = auditRecord();
    await store.put(before);
    await makeUnavailable();
    const down = { instanceOf: StoreUnavailableError };
    await t.throwsAsync(store.put(auditRecord({ id: 'during', commit_index: 9999 })), down, 'put');
    await t.throwsAsync(store.put(before), down, 'an idempotent put must not answer created: false');
    await t.throwsAsync(store.byId(before.id), down, 'byId');
    await t.throwsAsync(store.byId('unknown'), down, 'byId of an unknown id must not answer undefined');
    await t.throwsAsync(store.latest('proj'), down, 'latest');
    await t.throwsAsync(store.latest('unknown'), down, 'latest of an unknown authority must not answer undefined');
    await t.throwsAsync(store.list('proj'), down, 'list');
    await t.throwsAsync(store.list('unknown'), down, 'list of an unknown authority must not answer []');
    await restore();
    t.deepEqual(await store.byId(before.id), before, 'records survived the outage');
    t.is(await store.byId('during'), undefined, 'a failed put stored nothing');
    t.deepEqual(await store.put(auditRecord({ id: 'after', commit_index: 9050 })), { created: true });
    t.deepEqual(
      (await store.list('proj')).map((r) => r.id),
      ['after', before.id],
    );
  });
}
