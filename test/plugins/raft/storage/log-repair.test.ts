import test, { type ExecutionContext } from 'ava';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import type { Entry, HardState, Snapshot } from '@baton/plugin-raft/internal/core/types.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { repairRaftLog, RaftRepairError } from '@baton/plugin-raft/internal/storage/log-repair.js';
import { RaftStorageCorruptError } from '@baton/plugin-raft/internal/storage/raft-storage.js';
import { imageOfPieces } from '@baton/plugin-raft/internal/storage/snapshot-image.js';

const entry = (index: number, term: number): Entry => ({ index, term, type: 'normal', data: `v${index}` });
const hs = (term: number, commit: number, vote = 'n1'): HardState => ({ term, vote, commit });

async function member(t: ExecutionContext, segmentBytes?: number) {
  const dir = await makeTempDir('raft-repair');
  t.teardown(() => dir.remove());
  const storage = new FileRaftStorage(new DirectoryFiles(dir.path), { segmentBytes });
  await storage.load();
  return { dir: dir.path, storage };
}

/** Flips a byte inside the record that holds `needle` in `file`; returns the record's offset. */
async function damage(path: string, needle: string): Promise<number> {
  const bytes = await readFile(path);
  const at = bytes.indexOf(needle);
  const start = bytes.lastIndexOf(0x0a, at) + 1;
  bytes[at + 2] ^= 0x01;
  await writeFile(path, bytes);
  return start;
}

const load = (dir: string) => new FileRaftStorage(new DirectoryFiles(dir)).load();

test('damage in the middle of a segment: cut there, the damaged file kept, the newest hard state kept, voting held back past the old end', async (t) => {
  const { dir, storage } = await member(t);
  for (let i = 1; i <= 6; i++) await storage.persist({ entries: [entry(i, 1)], hardState: hs(1, i - 1) });
  // A later term: the newest hard state is past the damage.
  await storage.persist({ entries: [entry(7, 2)], hardState: hs(2, 6, 'n2') });
  await storage.close();
  const [segment] = (await readdir(dir)).filter((n) => n.endsWith('.log'));
  const original = await readFile(join(dir, segment));
  const offset = await damage(join(dir, segment), '"index":4');
  await t.throwsAsync(load(dir), { instanceOf: RaftStorageCorruptError });

  const report = await repairRaftLog(dir);
  t.is(report.outcome, 'repaired');
  t.is(report.repairs.length, 1);
  const [step] = report.repairs;
  t.like(step.problem, { store: 'raft-log', file: segment, offset });
  t.deepEqual(step.setAside, [segment]);
  t.deepEqual(step.truncated, { file: segment, bytes: offset });
  t.deepEqual(step.droppedEntries, [5, 6, 7].map((i) => ({ index: i, term: i === 7 ? 2 : 1 })));
  t.is(report.lastIndex, 3);
  // Term and vote of the newest intact hard state; the commit the kept prefix knew; held back past 7.
  t.like(report.hardState, { term: 2, vote: 'n2', commit: 2 });
  t.true(report.hardState!.catchUpTo! >= 7, `catchUpTo ${report.hardState!.catchUpTo}`);
  const kept = await readFile(join(dir, 'damaged-1', segment));
  t.is(kept.length, original.length, 'the damaged segment is kept aside whole');

  const r = await load(dir);
  t.deepEqual(r.entries.map((e) => e.index), [1, 2, 3]);
  t.deepEqual(r.hardState, report.hardState);
  t.like(await repairRaftLog(dir), { outcome: 'intact', lastIndex: 3 });
});

test('damage in an earlier segment: it is cut, and every later segment is kept aside and removed', async (t) => {
  const { dir, storage } = await member(t, 120);
  for (let i = 1; i <= 8; i++) await storage.persist({ entries: [entry(i, 1)], hardState: hs(1, i) });
  await storage.close();
  const segments = (await readdir(dir)).filter((n) => n.endsWith('.log')).sort();
  t.true(segments.length >= 3, segments.join());
  const offset = await damage(join(dir, segments[1]), '"t":"e"');
  const report = await repairRaftLog(dir);
  t.deepEqual(report.repairs[0].setAside, segments.slice(1));
  t.deepEqual(report.repairs[0].truncated, { file: segments[1], bytes: offset });
  t.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.log')).sort(), segments.slice(0, 2));
  t.deepEqual((await readdir(join(dir, 'damaged-1'))).sort(), segments.slice(1));
  const r = await load(dir);
  t.true(r.entries.length >= 1 && r.entries.length < 8);
  t.true(r.hardState.catchUpTo! >= 8);
  t.true(r.hardState.commit <= r.entries.at(-1)!.index, 'commit never points past the log kept');
});

test('a damaged snapshot in force: every segment and snapshot goes aside; the member starts from its hard state', async (t) => {
  const { dir, storage } = await member(t);
  await storage.persist({ entries: Array.from({ length: 9 }, (_, i) => entry(i + 1, 3)), hardState: hs(3, 9, 'n3') });
  const snapshot: Snapshot = { meta: { index: 9, term: 3, voters: ['n1', 'n2', 'n3'] }, data: imageOfPieces([{ a: 1 }, { b: 2 }, { c: 3 }]) };
  await storage.writeSnapshot(snapshot);
  await storage.compact(snapshot, 7, [entry(8, 3), entry(9, 3)], hs(3, 9, 'n3'));
  await storage.persist({ entries: [entry(10, 3)], hardState: hs(3, 10, 'n3') });
  await storage.close();
  const names = (await readdir(dir)).sort();
  const snap = names.find((n) => n.endsWith('.snap'))!;
  await damage(join(dir, snap), '"b"');
  await t.throwsAsync(load(dir), { instanceOf: RaftStorageCorruptError, message: /Raft snapshot/ });

  const report = await repairRaftLog(dir);
  t.like(report.repairs[0], { problem: { store: 'raft-snapshot', file: snap } });
  t.deepEqual(report.repairs[0].setAside, names);
  t.is(report.repairs[0].truncated, undefined);
  t.like(report.hardState, { term: 3, vote: 'n3', commit: 0 });
  t.true(report.hardState!.catchUpTo! >= 10);
  t.deepEqual((await readdir(join(dir, 'damaged-1'))).sort(), names);
  const r = await load(dir);
  t.deepEqual(r.entries, []);
  t.is(r.snapshot, undefined);
  t.deepEqual(r.hardState, report.hardState);
});

test('a dry run changes nothing; an intact log is left alone; a directory without a log is refused', async (t) => {
  const { dir, storage } = await member(t);
  await storage.persist({ entries: [entry(1, 1), entry(2, 1)], hardState: hs(1, 2) });
  await storage.close();
  t.like(await repairRaftLog(dir), { outcome: 'intact', lastIndex: 2, repairs: [] });
  const [segment] = (await readdir(dir)).filter((n) => n.endsWith('.log'));
  await damage(join(dir, segment), '"index":1');
  const before = await readFile(join(dir, segment));
  t.like(await repairRaftLog(dir, { dryRun: true }), { outcome: 'would-repair', lastIndex: 0 });
  t.deepEqual(await readFile(join(dir, segment)), before);
  t.deepEqual(await readdir(dir), [segment]);
  const empty = await makeTempDir('raft-repair-empty');
  t.teardown(() => empty.remove());
  await t.throwsAsync(repairRaftLog(empty.path), { instanceOf: RaftRepairError, message: /no Raft log in/ });
  await t.throwsAsync(repairRaftLog(join(empty.path, 'missing')), { instanceOf: RaftRepairError, message: /does not exist/ });
});
