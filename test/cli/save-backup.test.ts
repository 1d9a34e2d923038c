import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { saveBackup } from '@baton/cli/internal/consensus/save-backup.js';
import { decodeBackup, encodeBackup } from '@baton/cluster/internal/snapshot-file.js';
import { workDir } from './temp-project.js';

const backup = encodeBackup({ format: 'baton-raft-snapshot/1', index: 12, term: 3, voters: ['n1', 'n2', 'n3'], pieces: [{ a: 1 }, [2, 3], 'four'] }, 'stream-transfer', 'n2');

/** The backup's bytes in chunks of `size`, cut anywhere (inside the header line too). */
async function* chunks(bytes: Buffer, size: number): AsyncIterable<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

test('a backup streamed in any chunking is written 0600 and reads back as it was sent', async (t) => {
  const dir = await workDir(t);
  const bytes = Buffer.from(backup.lines.join(''));
  for (const size of [1, 7, 64, bytes.length]) {
    const file = join(dir, `backup-${size}.ndjson`);
    const saved = await saveBackup(file, chunks(bytes, size), 'http://n2');
    t.is(saved.bytes, bytes.length);
    t.deepEqual(saved.header, backup.header);
    t.is((await stat(file)).mode & 0o777, 0o600);
    t.deepEqual(decodeBackup(await readFile(file)).snapshot.pieces, [{ a: 1 }, [2, 3], 'four']);
  }
});

test('a backup cut short or changed on the way is refused and leaves no file behind', async (t) => {
  const dir = await workDir(t);
  const bytes = Buffer.from(backup.lines.join(''));
  const cut = bytes.subarray(0, bytes.length - 3);
  await t.throwsAsync(saveBackup(join(dir, 'cut.ndjson'), chunks(cut, 16), 'http://n2'), { message: /checksum mismatch/ });
  const changed = Buffer.from(bytes.toString('utf8').replace('four', 'fous'));
  await t.throwsAsync(saveBackup(join(dir, 'changed.ndjson'), chunks(changed, 16), 'http://n2'), { message: /checksum mismatch/ });
  await t.throwsAsync(saveBackup(join(dir, 'html.ndjson'), chunks(Buffer.from('<html>\n'), 16), 'http://n2'), { message: /not JSON/ });
  t.deepEqual(await readdir(dir), []);
});
