import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { CorruptRecordError } from '@baton/contracts/internal/errors.js';
import { join } from 'node:path';
import { DiskWal } from '@baton/stream-transfer/internal/disk-wal.js';
import { FileWal } from '@baton/stream-transfer/internal/file-wal.js';
import type { WalEntry } from '@baton/stream-transfer/internal/wal.js';
import { decodeEntries, encodeEntries } from '@baton/stream-transfer/internal/wal-codec.js';
import { recoverSessions } from '@baton/stream-transfer/internal/wal-recovery.js';
import { SimDisk } from '@baton/testing/internal/sim/disk.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const open = (next = 0): WalEntry => ({ t: 'open', stream: 's', epoch: 1, next, producers: {} });
const records = (first: number, bodies: string[]): WalEntry => ({ t: 'records', stream: 's', epoch: 1, first, bodies });

test('the codec cuts a torn tail and reports damage before the end, with the intact entries after it', (t) => {
  const bytes = encodeEntries([open(), records(0, ['a']), records(1, ['b'])]);
  t.is(decodeEntries(bytes).entries.length, 3);
  const torn = decodeEntries(bytes.slice(0, bytes.length - 3));
  t.like(torn, { validBytes: encodeEntries([open(), records(0, ['a'])]).length, damage: undefined }, 'half a line is a torn tail');
  t.is(torn.entries.length, 2);
  const corrupted = Uint8Array.from(bytes);
  corrupted[20] ^= 1;
  const damaged = decodeEntries(corrupted);
  t.is(damaged.entries.length, 0, 'nothing before the damaged entry');
  t.like(damaged.damage, { offset: 0, reason: 'its checksum does not match' });
  t.deepEqual(damaged.damage!.later.map((r) => r.value), [records(0, ['a']), records(1, ['b'])], 'the entries after it are not lost from sight');
});

test('recovery keeps the latest session per stream, contiguous records past the last flush, and producer marks', (t) => {
  const sessions = recoverSessions([
    open(0),
    { t: 'records', stream: 's', epoch: 1, first: 0, bodies: ['a', 'b'], stamps: [{ id: 'p', seq: 3, first: 0, count: 2 }] },
    { t: 'flushed', stream: 's', epoch: 1, upTo: 2 },
    records(2, ['c']),
    records(5, ['gap']),
    { t: 'closed', stream: 'old', epoch: 4, tail: 9, producers: {} },
    { t: 'open', stream: 'old', epoch: 3, next: 0, producers: {} },
  ]);
  t.like(sessions.get('s'), { status: 'open', next: 3, flushedUpTo: 2, producers: { p: { seq: 3, first: 0, count: 2 } } });
  t.deepEqual(sessions.get('s')!.unflushed.map((r) => r.first), [2], 'a record after a gap was never acknowledged');
  t.like(sessions.get('old'), { status: 'closed', epoch: 4, next: 9 }, 'an older epoch never overrides a newer one');
});

test('a DiskWal keeps exactly what was synced across a crash, torn tails included', async (t) => {
  for (let seed = 1; seed <= 20; seed++) {
    const disk = new SimDisk(new SeededRng(seed));
    const wal = new DiskWal(disk);
    await wal.append([open()]);
    await wal.append([records(0, ['durable'])]);
    const pending = wal.append([records(1, ['in flight'])]);
    disk.crash({ tearUnsyncedAppends: true });
    wal.kill();
    await pending.catch(() => undefined);
    const recovered = await new DiskWal(disk).replay();
    t.deepEqual(recovered.slice(0, 2), [open(), records(0, ['durable'])], `seed ${seed}`);
    t.true(recovered.length <= 3);
  }
});

test('a FileWal survives a reopen, cuts a torn tail, and compacts by rewriting', async (t) => {
  const dir = await makeTempDir('file-wal');
  t.teardown(() => dir.remove());
  let wal = await FileWal.open(dir.path);
  await Promise.all([wal.append([open()]), wal.append([records(0, ['a'])]), wal.append([records(1, ['b'])])]);
  await wal.close();
  const file = join(dir.path, 'streams.wal');
  await writeFile(file, Buffer.concat([await readFile(file), Buffer.from('0badc0de {"t":"rec')]));
  wal = await FileWal.open(dir.path);
  t.is((await wal.replay()).length, 3);
  await wal.append([records(2, ['c'])]);
  t.is((await wal.replay()).length, 4, 'an append after a torn tail starts on a clean line');
  await wal.rewrite([{ t: 'closed', stream: 's', epoch: 1, tail: 3, producers: {} }]);
  await wal.append([{ t: 'settled', stream: 's', epoch: 1 }]);
  t.deepEqual((await wal.replay()).map((e) => e.t), ['closed', 'settled']);
  await wal.close();
  await t.throwsAsync(wal.append([open()]), { message: /closed/ });
});

/** A FileWal's file with `count` records entries, and the byte offset where entry `i` starts. */
async function walWithEntries(count: number) {
  const dir = await makeTempDir('file-wal-damage');
  const wal = await FileWal.open(dir.path);
  const entries = [open(), ...Array.from({ length: count - 1 }, (_, i) => records(i, [`body ${i}`]))];
  await wal.append(entries);
  await wal.close();
  const offsets = entries.map((_, i) => encodeEntries(entries.slice(0, i)).length);
  return { dir, file: join(dir.path, 'streams.wal'), entries, offsets };
}

test('a FileWal with a flipped byte in the middle refuses to open, naming the file, the byte and the repair; nothing is cut', async (t) => {
  const { dir, file, offsets } = await walWithEntries(10);
  t.teardown(() => dir.remove());
  const bytes = await readFile(file);
  bytes[offsets[4] + 15] ^= 0x10;
  await writeFile(file, bytes);
  const counted: CorruptRecordError[] = [];
  const error = await t.throwsAsync(FileWal.open(dir.path, { onCorruption: (e) => counted.push(e) }), { instanceOf: CorruptRecordError });
  t.like(error, { code: 'storage_corrupt', store: 'stream-wal', file, offset: offsets[4] });
  t.regex(error!.message, new RegExp(`^stream WAL ${file} is damaged at byte ${offsets[4]}: its checksum does not match, and 5 intact entries follow it`));
  t.true(error!.message.includes(`baton repair wal ${dir.path}`), error!.message);
  t.deepEqual(counted, [error], 'told before the open fails, once');
  t.deepEqual(await readFile(file), bytes, 'no entry after the damage was dropped');
  // Reading (as a replay after open would) says the same.
  await t.throwsAsync(FileWal.open(dir.path), { instanceOf: CorruptRecordError });
});

test('a FileWal still cuts a torn tail silently, and only that', async (t) => {
  const { dir, file, entries } = await walWithEntries(4);
  t.teardown(() => dir.remove());
  const whole = await readFile(file);
  // The next append's first half: what a crash mid-append leaves.
  await writeFile(file, Buffer.concat([whole, encodeEntries([records(3, ['torn'])]).subarray(0, 17)]));
  let counted = 0;
  const wal = await FileWal.open(dir.path, { onCorruption: () => counted++ });
  t.teardown(() => wal.close());
  t.deepEqual(await wal.replay(), entries);
  t.is(counted, 0);
  t.deepEqual(await readFile(file), whole, 'cut back to the last whole entry');
});
