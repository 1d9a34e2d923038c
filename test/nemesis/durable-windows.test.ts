import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { raftSnapshotWindow, walCompactionWindow } from './durable-windows.js';

const SNAP = 'snap-0000000000000042.snap';

async function scratch(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'durable-windows-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a Raft snapshot window is open while the snapshot file is there and no log segment names it', async (t) => {
  const dir = await scratch(t);
  const window = raftSnapshotWindow('install', dir);
  t.true(window.opens(dir, SNAP));
  t.false(window.opens(dir, 'wal-000000000001.log'));
  t.false(await window.inside(dir, SNAP), 'no file yet');
  await writeFile(join(dir, SNAP), 'pieces');
  await writeFile(join(dir, 'wal-000000000001.log'), '0badc0de {"t":"base","i":40,"s":40}\n');
  t.true(await window.inside(dir, SNAP));
  // The base record that puts it in force: the install (or compaction) is over.
  await writeFile(join(dir, 'wal-000000000002.log'), '0badc0de {"t":"base","i":42,"s":42}\n');
  t.false(await window.inside(dir, SNAP));
});

test('a Raft snapshot window above an index ignores the snapshots a member may take of its own', (t) => {
  const window = raftSnapshotWindow('install', '/nowhere', 42);
  t.false(window.opens('/nowhere', SNAP));
  t.true(window.opens('/nowhere', 'snap-0000000000000043.snap'));
});

test('a WAL compaction window is open while streams.wal.compact is there', async (t) => {
  const dir = await scratch(t);
  const window = walCompactionWindow(dir);
  t.true(window.opens(dir, 'streams.wal.compact'));
  t.false(window.opens(dir, 'streams.wal'));
  t.false(await window.inside(dir, 'streams.wal.compact'));
  await writeFile(join(dir, 'streams.wal.compact'), '');
  t.true(await window.inside(dir, 'streams.wal.compact'));
});
