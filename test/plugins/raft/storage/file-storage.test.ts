import test from 'ava';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CorruptRecordError } from '@baton/contracts/internal/errors.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { SimDisk } from '@baton/testing/internal/sim/disk.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import type { Entry, HardState, Snapshot } from '@baton/plugin-raft/internal/core/types.js';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import { RaftStorageCorruptError, type RaftStorage, type RecoveredState } from '@baton/plugin-raft/internal/storage/raft-storage.js';
import { SimDiskFiles } from '../support/sim-disk-files.js';
import { imageOfPieces, piecesOf } from '@baton/plugin-raft/internal/storage/snapshot-image.js';

const entry = (index: number, term: number, data: unknown = `v${index}`): Entry => ({ index, term, type: 'normal', data });
const entries = (from: number, to: number, term: number) => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i, term));
const hs = (term: number, commit: number, vote = 'n1'): HardState => ({ term, vote, commit });
const snap = (index: number, term: number, pieces: unknown[] = [{ at: index }, { then: [index] }]): Snapshot => ({
  meta: { index, term, voters: ['n1', 'n2', 'n3'] },
  data: imageOfPieces(pieces),
});
/** A snapshot as plain values, to compare what was stored with what came back. */
const plain = (s: Snapshot | undefined) => s && { meta: s.meta, pieces: [...piecesOf(s.data)] };

/** Writes a snapshot the member took and puts it in force, as the driver does in two steps. */
async function saveSnapshot(s: RaftStorage, snapshot: Snapshot, compactTo: number, retained: Entry[], hardState: HardState) {
  await s.writeSnapshot(snapshot);
  await s.compact(snapshot, compactTo, retained, hardState);
}

function lastIndexOf(state: RecoveredState): number {
  if (state.entries.length > 0) return state.entries[state.entries.length - 1].index;
  return state.snapshot?.meta.index ?? 0;
}

for (const [name, make] of [
  ['memory', () => new MemoryRaftStorage()],
  ['file on a simulated disk', () => new FileRaftStorage(new SimDiskFiles(new SimDisk()), { segmentBytes: 300 })],
] as [string, () => RaftStorage][]) {
  test(`${name}: persist, truncate a conflicting suffix, snapshot and compact, then recover`, async (t) => {
    const s = make();
    t.deepEqual(await s.load(), { hardState: hs(0, 0, ''), snapshot: undefined, entries: [] });
    await s.persist({ entries: entries(1, 5, 1), hardState: hs(1, 3) });
    await s.persist({ entries: [entry(4, 2, 'new4')], hardState: hs(2, 3) });
    let r = await s.load();
    t.deepEqual(r.entries.map((e) => `${e.term}/${e.index}`), ['1/1', '1/2', '1/3', '2/4']);
    t.deepEqual(r.hardState, hs(2, 3));
    await saveSnapshot(s, snap(3, 1), 2, [entry(3, 1), entry(4, 2, 'new4')], hs(2, 3));
    await s.persist({ entries: [entry(5, 2)], hardState: hs(2, 5) });
    r = await s.load();
    t.deepEqual(plain(r.snapshot), plain(snap(3, 1)));
    t.deepEqual(r.entries.filter((e) => e.index > 3).map((e) => e.index), [4, 5]);
    t.is(lastIndexOf(r), 5);
    t.deepEqual(r.hardState, hs(2, 5));
    // A snapshot from the leader replaces the log.
    await s.persist({ snapshot: snap(10, 3), entries: [], hardState: hs(3, 10) });
    r = await s.load();
    t.is(r.snapshot?.meta.index, 10);
    t.deepEqual(r.entries, []);
    await s.persist({ entries: [entry(11, 3)] });
    r = await s.load();
    t.deepEqual(r.entries.map((e) => e.index), [11]);
    await s.close();
  });
}

test('file storage: a torn record at the end of the log is cut off, and appends continue after it', async (t) => {
  const disk = new SimDisk(new SeededRng(3));
  const files = new SimDiskFiles(disk);
  const s = new FileRaftStorage(files);
  await s.load();
  await s.persist({ entries: entries(1, 3, 1), hardState: hs(1, 2) });
  // A crash in the middle of the next append: only part of its bytes reach the disk.
  const [segment] = await files.list();
  await files.append(segment, new TextEncoder().encode('deadbeef {"t":"e","e":{"ind'));
  disk.sync();
  const reopened = new FileRaftStorage(new SimDiskFiles(disk));
  const r = await reopened.load();
  t.deepEqual(r.entries.map((e) => e.index), [1, 2, 3]);
  t.deepEqual(r.hardState, hs(1, 2));
  await reopened.persist({ entries: [entry(4, 1)], hardState: hs(1, 4) });
  const again = await new FileRaftStorage(new SimDiskFiles(disk)).load();
  t.deepEqual(again.entries.map((e) => e.index), [1, 2, 3, 4]);
  t.deepEqual(again.hardState, hs(1, 4));
});

test('file storage: damage before the last segment is corruption, refused at start', async (t) => {
  const disk = new SimDisk();
  const files = new SimDiskFiles(disk);
  const s = new FileRaftStorage(files, { segmentBytes: 50 });
  await s.load();
  await s.persist({ entries: entries(1, 2, 1), hardState: hs(1, 1) });
  await s.persist({ entries: entries(3, 4, 1), hardState: hs(1, 3) });
  const [first] = await files.list();
  const bytes = disk.read(`raft/${first}`)!;
  bytes[12] ^= 0xff;
  disk.write(`raft/${first}`, bytes);
  disk.sync();
  await t.throwsAsync(new FileRaftStorage(new SimDiskFiles(disk)).load(), { instanceOf: RaftStorageCorruptError });
});

test('file storage: a crash at any point keeps every acknowledged write and never invents one (300 seeds)', async (t) => {
  let checked = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const rng = new SeededRng(seed);
    const disk = new SimDisk(rng.fork('disk'));
    const files = new SimDiskFiles(disk);
    const s = new FileRaftStorage(files, { segmentBytes: 200 + rng.int(400) });
    await s.load();
    // The acknowledged model: entries by index, hard state, snapshot index.
    let acked: { entries: Entry[]; hs: HardState; snapIndex: number } = { entries: [], hs: hs(0, 0, ''), snapIndex: 0 };
    let term = 1;
    let inProgress: typeof acked | undefined;
    files.failAfter = 5 + rng.int(60);
    try {
      for (let step = 0; step < 40; step++) {
        const last = acked.entries.length > 0 ? acked.entries[acked.entries.length - 1].index : acked.snapIndex;
        if (rng.chance(0.15) && last > acked.snapIndex) {
          const at = acked.snapIndex + 1 + rng.int(last - acked.snapIndex);
          const retained = acked.entries.filter((e) => e.index > at);
          inProgress = { entries: retained, hs: acked.hs, snapIndex: at };
          const atTerm = acked.entries.find((e) => e.index === at)!.term;
          await saveSnapshot(s, snap(at, atTerm), at, retained, acked.hs);
        } else {
          // Sometimes overwrite a suffix, never below commit. As in Raft, only a newer term's
          // entries replace existing ones (a follower truncates only on a term conflict).
          const from = Math.max(acked.hs.commit + 1, last + 1 - rng.int(3), acked.snapIndex + 1);
          if (from <= last || rng.chance(0.2)) term++;
          const batch = entries(from, from + rng.int(4), term);
          const kept = acked.entries.filter((e) => e.index < from);
          const next = { entries: [...kept, ...batch], hs: hs(term, Math.min(from - 1 + rng.int(batch.length + 1), batch[batch.length - 1].index)), snapIndex: acked.snapIndex };
          next.hs.commit = Math.max(next.hs.commit, acked.hs.commit);
          inProgress = next;
          await s.persist({ entries: batch, hardState: next.hs });
        }
        acked = inProgress;
        inProgress = undefined;
      }
    } catch (error) {
      t.is((error as Error).message, 'simulated crash', `seed ${seed}`);
    }
    disk.crash({ tearUnsyncedAppends: true });
    const r = await new FileRaftStorage(new SimDiskFiles(disk)).load();
    const key = (e: Entry) => JSON.stringify(e);
    const known = new Set([...acked.entries, ...(inProgress?.entries ?? [])].map(key));
    const got = new Map(r.entries.map((e) => [e.index, key(e)]));
    const floor = Math.max(acked.snapIndex, r.snapshot?.meta.index ?? 0);
    const problems: string[] = [];
    // Nothing invented: every recovered entry was written by someone.
    for (const e of r.entries) if (e.index > floor && !known.has(key(e))) problems.push(`invented ${e.term}/${e.index}`);
    // Nothing acknowledged lost, unless the unacknowledged batch replaced it.
    // (A batch that rewrites from index i drops every entry from i on, as Raft's truncation does.)
    const replaced = (e: Entry) => inProgress !== undefined && !inProgress.entries.some((p) => key(p) === key(e));
    for (const e of acked.entries) {
      if (e.index > floor && got.get(e.index) !== key(e) && !replaced(e)) problems.push(`lost ${e.term}/${e.index}`);
    }
    const hsText = JSON.stringify(r.hardState);
    const ackedHs = JSON.stringify(acked.hs);
    const newHs = inProgress ? JSON.stringify(inProgress.hs) : undefined;
    if (hsText !== ackedHs && hsText !== newHs) problems.push(`hard state ${hsText}`);
    // The hard state is the batch's last record: if it survived, the whole batch did.
    if (inProgress && hsText === newHs && hsText !== ackedHs) {
      for (const e of inProgress.entries) if (e.index > floor && got.get(e.index) !== key(e)) problems.push(`batch partly lost at ${e.index}`);
    }
    if (problems.length > 0) {
      t.fail(`seed ${seed}: ${problems.join(', ')}; recovered ${JSON.stringify({ hs: r.hardState, snap: r.snapshot?.meta.index, entries: r.entries.map((e) => `${e.term}/${e.index}`) })}, acknowledged ${JSON.stringify({ hs: acked.hs, snap: acked.snapIndex, entries: acked.entries.map((e) => `${e.term}/${e.index}`) })}`);
      return;
    }
    checked++;
  }
  t.is(checked, 300);
});

test('file storage on a real directory survives close and reopen', async (t) => {
  const dir = await makeTempDir('raft-files');
  try {
    const s = new FileRaftStorage(new DirectoryFiles(dir.path), { segmentBytes: 256 });
    await s.load();
    await s.persist({ entries: entries(1, 20, 1), hardState: hs(1, 15) });
    await saveSnapshot(s, snap(10, 1), 8, entries(9, 20, 1), hs(1, 15));
    await s.persist({ entries: entries(21, 25, 2), hardState: hs(2, 22) });
    await s.close();
    const r = await new FileRaftStorage(new DirectoryFiles(dir.path)).load();
    t.is(r.snapshot?.meta.index, 10);
    t.deepEqual(r.entries.map((e) => e.index), Array.from({ length: 17 }, (_, i) => i + 9));
    t.deepEqual(r.hardState, hs(2, 22));
  } finally {
    await dir.remove();
  }
});

test('file storage: a snapshot written but not put in force (a crash between) is ignored at start; the log is whole', async (t) => {
  const disk = new SimDisk();
  const s = new FileRaftStorage(new SimDiskFiles(disk));
  await s.load();
  await s.persist({ entries: entries(1, 12, 1), hardState: hs(1, 12) });
  await saveSnapshot(s, snap(5, 1), 4, entries(5, 12, 1), hs(1, 12));
  // The next snapshot is durable as a file, and the member dies before the log names it.
  await s.writeSnapshot(snap(10, 1));
  const r = await new FileRaftStorage(new SimDiskFiles(disk)).load();
  t.deepEqual(plain(r.snapshot), plain(snap(5, 1)));
  t.deepEqual(r.entries.map((e) => e.index), [5, 6, 7, 8, 9, 10, 11, 12]);
});

test('file storage: a snapshot file cut short is refused when the log names it', async (t) => {
  const disk = new SimDisk();
  const files = new SimDiskFiles(disk);
  const s = new FileRaftStorage(files);
  await s.load();
  await s.persist({ entries: entries(1, 6, 1), hardState: hs(1, 6) });
  await saveSnapshot(s, snap(5, 1, [{ a: 1 }, { b: 2 }, { c: 3 }]), 5, entries(6, 6, 1), hs(1, 6));
  const name = (await files.list()).find((n) => n.endsWith('.snap'))!;
  const bytes = (await files.read(name))!;
  await files.truncate(name, bytes.length - 20);
  await t.throwsAsync(new FileRaftStorage(new SimDiskFiles(disk)).load(), { instanceOf: RaftStorageCorruptError, message: /Raft snapshot .* is damaged at byte \d+: it ends before its last piece/ });
});

test('file storage: a snapshot file of earlier versions (one JSON line, no name in the log) still loads', async (t) => {
  const disk = new SimDisk();
  const files = new SimDiskFiles(disk);
  const whole = { meta: { index: 7, term: 2, voters: ['n1'] }, data: { sm: { data: { a: '1' } }, window: [] } };
  const json = JSON.stringify(whole);
  const { crc32 } = await import('node:zlib');
  await files.replace('snap-0000000000000007.json', new TextEncoder().encode(`${crc32(json).toString(16).padStart(8, '0')} ${json}\n`));
  const r = await new FileRaftStorage(files).load();
  t.deepEqual(r.snapshot, whole);
});

/** A member's directory on disk with entries 1..count in one segment, and each record's byte offset. */
async function memberDir(count: number) {
  const dir = await makeTempDir('raft-damage');
  const s = new FileRaftStorage(new DirectoryFiles(dir.path));
  await s.load();
  for (let i = 1; i <= count; i++) await s.persist({ entries: [entry(i, 1)], hardState: hs(1, i - 1) });
  await s.close();
  const [segment] = (await readdir(dir.path)).filter((n) => n.endsWith('.log'));
  const bytes = await readFile(join(dir.path, segment));
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a && i + 1 < bytes.length) starts.push(i + 1);
  return { dir, segment, path: join(dir.path, segment), bytes, starts };
}

test('file storage: a flipped byte in the middle of the last segment is refused at start with the file and offset (it was cut as a torn tail)', async (t) => {
  const { dir, path, bytes, starts } = await memberDir(10);
  t.teardown(() => dir.remove());
  // Records alternate entry, hard state: record 8 is entry 5.
  bytes[starts[8] + 12] ^= 0x04;
  await writeFile(path, bytes);
  const counted: string[] = [];
  const storage = new FileRaftStorage(new DirectoryFiles(dir.path), { onCorruption: (e) => counted.push(e.store) });
  const error = await t.throwsAsync(storage.load(), { instanceOf: RaftStorageCorruptError });
  t.true(error instanceof CorruptRecordError);
  t.like(error, { store: 'raft-log', file: path, offset: starts[8] });
  t.regex(error!.message, new RegExp(`^Raft log segment ${path} is damaged at byte ${starts[8]}: its checksum does not match; 11 intact records follow it`));
  t.true(error!.message.includes(`baton repair raft ${dir.path}`), error!.message);
  t.deepEqual(counted, ['raft-log']);
  t.deepEqual(await readFile(path), bytes, 'nothing was cut: entries 6 to 10 are still on disk');
});

test('file storage: a whole last record that is damaged is refused too; only an incomplete one is a torn tail', async (t) => {
  const { dir, path, bytes, starts } = await memberDir(3);
  t.teardown(() => dir.remove());
  const damaged = Uint8Array.from(bytes);
  damaged[damaged.length - 5] ^= 0x01;
  await writeFile(path, damaged);
  await t.throwsAsync(new FileRaftStorage(new DirectoryFiles(dir.path)).load(), { instanceOf: RaftStorageCorruptError, message: /nothing intact follows it/ });
  await writeFile(path, bytes.subarray(0, bytes.length - 5));
  const r = await new FileRaftStorage(new DirectoryFiles(dir.path)).load();
  t.deepEqual(r.entries.map((e) => e.index), [1, 2, 3], 'the torn hard state is cut, the entries before it kept');
  t.deepEqual(r.hardState, hs(1, 1));
  t.is((await readFile(path)).length, starts[starts.length - 1]);
});

test('file storage: a flipped byte in the middle of the snapshot in force is refused at start with the file and offset', async (t) => {
  const dir = await makeTempDir('raft-snapshot-damage');
  t.teardown(() => dir.remove());
  const s = new FileRaftStorage(new DirectoryFiles(dir.path));
  await s.load();
  await s.persist({ entries: entries(1, 8, 1), hardState: hs(1, 8) });
  const pieces = Array.from({ length: 6 }, (_, i) => ({ piece: i, data: 'x'.repeat(40) }));
  await saveSnapshot(s, snap(8, 1, pieces), 8, [], hs(1, 8));
  await s.close();
  const name = (await readdir(dir.path)).find((n) => n.endsWith('.snap'))!;
  const path = join(dir.path, name);
  const bytes = await readFile(path);
  const lines = bytes.toString('utf8').split('\n');
  // Line 0 is the meta, lines 1-6 the pieces: damage piece 3.
  const offset = Buffer.byteLength(lines.slice(0, 4).join('\n')) + 1;
  bytes[offset + 30] ^= 0x02;
  await writeFile(path, bytes);
  const counted: string[] = [];
  const error = await t.throwsAsync(new FileRaftStorage(new DirectoryFiles(dir.path), { onCorruption: (e) => counted.push(e.store) }).load(), {
    instanceOf: RaftStorageCorruptError,
  });
  t.like(error, { store: 'raft-snapshot', file: path, offset });
  t.regex(error!.message, new RegExp(`^Raft snapshot ${path} is damaged at byte ${offset}: its checksum does not match; 3 intact records follow it`));
  t.regex(error!.message, /keeps only the hard state/);
  t.deepEqual(counted, ['raft-snapshot']);
});
