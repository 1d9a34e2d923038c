import test, { type ExecutionContext } from 'ava';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileWal } from '@baton/stream-transfer/internal/file-wal.js';
import type { WalEntry } from '@baton/stream-transfer/internal/wal.js';
import { encodeEntries } from '@baton/stream-transfer/internal/wal-codec.js';
import { repairWal, WalRepairError } from '@baton/stream-transfer/internal/wal-repair.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const entries: WalEntry[] = [
  { t: 'open', stream: 's', epoch: 1, next: 0, producers: {} },
  { t: 'records', stream: 's', epoch: 1, first: 0, bodies: ['a', 'b'] },
  { t: 'flushed', stream: 's', epoch: 1, upTo: 2 },
  { t: 'records', stream: 's', epoch: 1, first: 2, bodies: ['c'] },
  { t: 'records', stream: 's', epoch: 1, first: 3, bodies: ['d', 'e'] },
  { t: 'closed', stream: 's', epoch: 1, tail: 5, producers: {} },
];
const offsetOf = (i: number) => encodeEntries(entries.slice(0, i)).length;

async function damagedWal(t: ExecutionContext, entry: number) {
  const dir = await makeTempDir('wal-repair');
  t.teardown(() => dir.remove());
  const file = join(dir.path, 'streams.wal');
  const bytes = Buffer.from(encodeEntries(entries));
  bytes[offsetOf(entry) + 14] ^= 0x08;
  await writeFile(file, bytes);
  return { dir: dir.path, file, bytes };
}

test('repair keeps the damaged file aside, keeps the entries before the damage, and lists the ones it drops', async (t) => {
  const { dir, file, bytes } = await damagedWal(t, 3);
  await t.throwsAsync(FileWal.open(dir), { message: /is damaged at byte/ });
  const report = await repairWal(dir);
  t.like(report, { outcome: 'repaired', file, kept: { entries: 3, bytes: offsetOf(3) }, keptAs: join(dir, 'damaged-1', 'streams.wal') });
  t.like(report.damage, { offset: offsetOf(3), reason: 'its checksum does not match', droppedBytes: bytes.length - offsetOf(3) });
  t.deepEqual(report.damage!.dropped, [
    { offset: offsetOf(4), entry: entries[4] },
    { offset: offsetOf(5), entry: entries[5] },
  ]);
  t.deepEqual(await readFile(join(dir, 'damaged-1', 'streams.wal')), bytes, 'the damaged file is kept whole');
  t.deepEqual(await readFile(file), bytes.subarray(0, offsetOf(3)));
  const wal = await FileWal.open(dir);
  t.teardown(() => wal.close());
  t.deepEqual(await wal.replay(), entries.slice(0, 3), 'the node opens the repaired WAL');
});

test('a second repair keeps its copy beside the first, and an intact WAL is left alone', async (t) => {
  const { dir, file } = await damagedWal(t, 1);
  await repairWal(dir);
  t.like(await repairWal(dir), { outcome: 'intact', kept: { entries: 1 } });
  const bytes = Buffer.from(await readFile(file));
  await writeFile(file, Buffer.concat([bytes, Buffer.from('garbage line\n'), Buffer.from(encodeEntries(entries.slice(1, 2)))]));
  t.like(await repairWal(dir), { outcome: 'repaired', keptAs: join(dir, 'damaged-2', 'streams.wal'), damage: { reason: 'it is not a checksummed record' } });
  t.deepEqual((await readdir(dir)).sort(), ['damaged-1', 'damaged-2', 'streams.wal']);
});

test('a dry run says what it would do and changes nothing; a torn tail alone is no damage', async (t) => {
  const { dir, file, bytes } = await damagedWal(t, 2);
  t.like(await repairWal(dir, { dryRun: true }), { outcome: 'would-repair', damage: { offset: offsetOf(2) } });
  t.deepEqual(await readFile(file), bytes);
  t.deepEqual((await readdir(dir)).sort(), ['streams.wal']);
  const torn = Buffer.from(encodeEntries(entries)).subarray(0, offsetOf(4) + 7);
  await writeFile(file, torn);
  t.like(await repairWal(dir), { outcome: 'intact', kept: { entries: 4 }, tornBytes: 7, damage: undefined });
  t.deepEqual(await readFile(file), torn, 'the node cuts a torn tail itself');
});

test('a directory without a WAL is refused, saying what to give', async (t) => {
  const dir = await makeTempDir('wal-repair-empty');
  t.teardown(() => dir.remove());
  await t.throwsAsync(repairWal(dir.path), { instanceOf: WalRepairError, message: /no stream WAL in .* \(no streams.wal\): give the node's WAL directory/ });
});
