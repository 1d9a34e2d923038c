import test from 'ava';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AuditConflictError,
  InvalidAuditRecordError,
  StoreUnavailableError,
} from '@baton/contracts/internal/audit-store.js';
import { auditRecord } from '@baton/conformance/internal/audit-store-suite.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { positionFileText, recordFileName } from '@baton/plugin-fs/internal/audit-record-file.js';
import { FsAuditStore } from '@baton/plugin-fs/internal/fs-audit-store.js';

const down = { instanceOf: StoreUnavailableError };

async function freshDir(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const temp = await makeTempDir('baton-fs-audit');
  t.teardown(temp.remove);
  return temp.path;
}

const recordFile = (dir: string, authority: string, commitIndex: number) =>
  join(dir, 'audit', 'records', `${authority}.a`, recordFileName(commitIndex));

test('fs audit store › a new instance on the same directory sees the records (restart)', async (t) => {
  const dir = await freshDir(t);
  const before = new FsAuditStore({ dir });
  const records = [
    auditRecord({ id: 'a-1', commit_index: 10 }),
    auditRecord({ id: 'a-2', commit_index: 30 }),
    auditRecord({ id: 'b-1', authority: 'ghcr.io/org/repo', commit_index: 20 }),
  ];
  for (const r of records) await before.put(r);

  const after = new FsAuditStore({ dir });
  await after.start();
  t.deepEqual(await after.byId('a-1'), records[0]);
  t.deepEqual(await after.latest('proj'), records[1]);
  t.deepEqual(await after.list('proj'), [records[1], records[0]]);
  t.deepEqual(await after.latest('ghcr.io/org/repo'), records[2]);
  t.deepEqual(await after.put(records[0]), { created: false }, 'idempotence survives the restart');
  await t.throwsAsync(after.put({ ...records[0], epoch: 99 }), { instanceOf: AuditConflictError });
});

test('fs audit store › very long authorities and ids are stored under hashed names', async (t) => {
  const dir = await freshDir(t);
  const authority = `registry.example/${'deep/'.repeat(80)}repo`;
  const id = `op-${'é'.repeat(300)}`;
  const record = auditRecord({ id, authority, commit_index: 1 });
  await new FsAuditStore({ dir }).put(record);
  const store = new FsAuditStore({ dir });
  t.deepEqual(await store.byId(id), record);
  t.deepEqual(await store.latest(authority), record);
  t.is(
    await store.latest(authority.slice(0, -1)),
    undefined,
    'a near-identical authority is another one',
  );
  const names = await readdir(join(dir, 'audit', 'records'));
  t.true(
    names.every((n) => n.length <= 255),
    names.join(', '),
  );
});

test('fs audit store › a corrupt record file is an outage, never a wrong answer', async (t) => {
  const dir = await freshDir(t);
  const store = new FsAuditStore({ dir });
  await store.put(auditRecord({ id: 'older', commit_index: 1 }));
  await store.put(auditRecord({ id: 'newer', commit_index: 2 }));
  for (const garbage of [
    '{"format":1,"record":{"id":"newer"',
    '',
    'null',
    '{"format":2}',
    '\u0000\u0001',
  ]) {
    await writeFile(recordFile(dir, 'proj', 2), garbage);
    const error = await t.throwsAsync(store.latest('proj'), down, JSON.stringify(garbage));
    t.regex(error!.message, /corrupt/);
    await t.throwsAsync(store.list('proj'), down);
    await t.throwsAsync(store.byId('newer'), down);
    await t.throwsAsync(store.put(auditRecord({ id: 'newer', commit_index: 2 })), down);
  }
  t.deepEqual(
    await store.byId('older'),
    auditRecord({ id: 'older', commit_index: 1 }),
    'intact records still read',
  );
});

test('fs audit store › a record file holding another identity is an outage', async (t) => {
  const dir = await freshDir(t);
  const store = new FsAuditStore({ dir });
  await store.put(auditRecord({ id: 'one', commit_index: 1 }));
  await store.put(auditRecord({ id: 'two', commit_index: 2 }));
  // A file copied over another by hand: its content names commit_index 1, its name says 2.
  await writeFile(recordFile(dir, 'proj', 2), await readFile(recordFile(dir, 'proj', 1)));
  await t.throwsAsync(store.latest('proj'), down);
  await t.throwsAsync(store.byId('two'), down);
});

test('fs audit store › an unreadable record (a directory in its place) is an outage', async (t) => {
  const dir = await freshDir(t);
  const store = new FsAuditStore({ dir });
  await store.put(auditRecord());
  await rm(recordFile(dir, 'proj', 9043));
  await mkdir(recordFile(dir, 'proj', 9043));
  await t.throwsAsync(store.latest('proj'), down);
  await t.throwsAsync(store.byId('5f0c-drain-proj'), down);
  await t.throwsAsync(store.put(auditRecord()), down);
});

test('fs audit store › a put that crashed between its two writes reads as absent and can be redone', async (t) => {
  const dir = await freshDir(t);
  const store = new FsAuditStore({ dir });
  await store.start();
  // The id index was written, the record never was.
  await writeFile(
    join(dir, 'audit', 'ids', 'crashed.i'),
    positionFileText('crashed', { authority: 'proj', commit_index: 77 }),
  );
  t.is(await store.byId('crashed'), undefined);
  t.is(await store.latest('proj'), undefined);
  const redone = auditRecord({ id: 'crashed', commit_index: 78 });
  t.deepEqual(
    await store.put(redone),
    { created: true },
    'the id is free: its record was never stored',
  );
  t.deepEqual(await store.byId('crashed'), redone);
  t.deepEqual(await store.put(auditRecord({ id: 'other', commit_index: 77 })), { created: true });
  t.deepEqual(await store.byId('crashed'), redone, 'the stale position no longer answers');
});

test('fs audit store › a temp file left by a crash is ignored, then cleared at start', async (t) => {
  const dir = await freshDir(t);
  const store = new FsAuditStore({ dir });
  await store.put(auditRecord());
  await writeFile(join(dir, 'audit', 'tmp', '4194999-1-1'), 'half written');
  await writeFile(join(dir, 'audit', 'records', 'proj.a', 'junk.json.tmp'), 'stray');
  t.deepEqual(await store.list('proj'), [auditRecord()]);
  const restarted = new FsAuditStore({ dir });
  await restarted.start();
  const left = await readdir(join(dir, 'audit', 'tmp'), { recursive: true, withFileTypes: true });
  t.deepEqual(
    left.filter((e) => e.isFile()),
    [],
    'the leftover is gone',
  );
  t.deepEqual(await restarted.list('proj'), [auditRecord()]);
});

test('fs audit store › a directory under a regular file cannot open, and says where', async (t) => {
  const dir = await freshDir(t);
  await writeFile(join(dir, 'file'), 'a regular file');
  const store = new FsAuditStore({ dir: join(dir, 'file', 'store') });
  const error = await t.throwsAsync(store.start(), down);
  t.true(error!.message.includes(join(dir, 'file', 'store')), error!.message);
  await t.throwsAsync(store.put(auditRecord()), down);
  await t.throwsAsync(store.byId('x'), down);
  await t.throwsAsync(store.latest('proj'), down);
  await t.throwsAsync(store.list('proj'), down);
});

test('fs audit store › a record with a bad field is refused with the field named', async (t) => {
  const dir = await freshDir(t);
  const store = new FsAuditStore({ dir });
  for (const [bad, field] of [
    [{ commit_index: -1 }, 'commit_index'],
    [{ commit_index: 1.5 }, 'commit_index'],
    [{ epoch: Number.NaN }, 'epoch'],
    [{ actor: undefined }, 'actor'],
    [{ reason: 7 }, 'reason'],
  ] as const) {
    const error = await t.throwsAsync(store.put({ ...auditRecord(), ...bad } as never), {
      instanceOf: InvalidAuditRecordError,
    });
    t.regex(error!.message, new RegExp(`\\b${field} must be`));
  }
  t.deepEqual(await store.list('proj'), []);
});
