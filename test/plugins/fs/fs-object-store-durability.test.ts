import test from 'ava';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { FsObjectStore } from '@baton/plugin-fs/internal/fs-object-store.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) =>
  b === undefined ? undefined : new TextDecoder().decode(b);

async function freshDir(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const temp = await makeTempDir('baton-fs-objects');
  t.teardown(temp.remove);
  return join(temp.path, 'store');
}

/** Every file under the store's temp directory, whichever process's subdirectory holds it. */
async function tempFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(dir, 'tmp'), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

/** A pid above Linux's pid_max: no process has it, so whatever it left is a crash's leftover. */
const DEAD_PID = 4_194_999;

async function allKeys(store: FsObjectStore, prefix = ''): Promise<string[]> {
  return (await store.list(prefix, { limit: 10_000 })).objects.map((o) => o.key);
}

test('fs object store › a new instance on the same directory sees the data (restart)', async (t) => {
  const dir = await freshDir(t);
  const before = new FsObjectStore({ dir });
  await before.start();
  const keys = ['a', 'a/b', 'streams/s1/segment-0001', 'ünï/😀 space', 'trailing/'];
  for (const key of keys) await before.put(key, utf8(`value of ${key}`));
  await before.put('gone', utf8('x'));
  await before.delete('gone');

  const after = new FsObjectStore({ dir });
  await after.start();
  for (const key of keys) t.is(text(await after.get(key)), `value of ${key}`);
  t.is(await after.get('gone'), undefined, 'a delete is durable too');
  t.deepEqual(await allKeys(after), [...keys].sort());
});

test('fs object store › the on-disk layout keeps a key and the keys below it apart', async (t) => {
  const dir = await freshDir(t);
  const store = new FsObjectStore({ dir });
  await store.put('a', utf8('1'));
  await store.put('a/b', utf8('2'));
  await store.put('A.txt', utf8('3'));
  t.deepEqual((await readdir(join(dir, 'objects'))).sort(), ['%41%2etxt.o', 'a.d', 'a.o']);
  t.deepEqual(await readdir(join(dir, 'objects', 'a.d')), ['b.o']);
});

test('fs object store › no temp file is left behind by puts, failed or not', async (t) => {
  const dir = await freshDir(t);
  const store = new FsObjectStore({ dir });
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(`k/${i}`, utf8(`v${i}`))));
  await store.put('once', utf8('x'), { ifAbsent: true });
  await t.throwsAsync(store.put('once', utf8('y'), { ifAbsent: true }));
  t.deepEqual(await tempFiles(dir), [], 'no temp file is left');
  t.is((await allKeys(store)).length, 21, 'only the objects are listed');
});

test('fs object store › a temp file left by a crash is ignored, then cleared at start', async (t) => {
  const dir = await freshDir(t);
  const store = new FsObjectStore({ dir });
  await store.put('real', utf8('real'));
  // What a crash between writing a temp file and renaming it leaves behind, in the current
  // layout and in the older flat one.
  await mkdir(join(dir, 'tmp', `${hostname()}-${DEAD_PID}-1`));
  await writeFile(join(dir, 'tmp', `${hostname()}-${DEAD_PID}-1`, '1'), 'half written');
  await writeFile(join(dir, 'tmp', `${DEAD_PID}-1-1`), 'half written, flat');
  t.deepEqual(await allKeys(store), ['real']);
  t.is(text(await store.get('real')), 'real');

  const restarted = new FsObjectStore({ dir });
  await restarted.start();
  t.deepEqual(await tempFiles(dir), [], 'the leftovers are gone after a restart');
  t.deepEqual(await allKeys(restarted), ['real']);
});

test('fs object store › a starting store leaves the temp files of live processes and of other hosts alone', async (t) => {
  const dir = await freshDir(t);
  await new FsObjectStore({ dir }).start();
  // Another live process of this host (this one, as another instance) mid-put, and a process of
  // another host sharing the volume: neither is this store's to clear.
  const live = join(dir, 'tmp', `${hostname()}-${process.pid}-999999`);
  const elsewhere = join(dir, 'tmp', `another-host.example-${DEAD_PID}-1`);
  for (const d of [live, elsewhere]) {
    await mkdir(d);
    await writeFile(join(d, '1'), 'being written');
  }
  await new FsObjectStore({ dir }).start();
  t.deepEqual(await readdir(live), ['1']);
  t.deepEqual(await readdir(elsewhere), ['1']);
});

test("fs object store › several stores on one directory start together and write through each other's starts", async (t) => {
  const dir = await freshDir(t);
  const stores = Array.from({ length: 4 }, () => new FsObjectStore({ dir }));
  await Promise.all(stores.map((s) => s.start()));
  // Every store keeps writing while new instances (restarted peers) start on the directory.
  const writes = stores.flatMap((s, i) =>
    Array.from({ length: 10 }, (_, j) => s.put(`s${i}/k${j}`, utf8(`${i}.${j}`))),
  );
  const restarts = Array.from({ length: 4 }, () => new FsObjectStore({ dir }).start());
  await Promise.all([...writes, ...restarts]);
  t.is((await allKeys(stores[0]!)).length, 40);
  t.deepEqual(await tempFiles(dir), [], 'no temp file is left');
});

test('fs object store › stray files in the object tree are never listed as keys', async (t) => {
  const dir = await freshDir(t);
  const store = new FsObjectStore({ dir });
  await store.put('dir/real', utf8('real'));
  const objects = join(dir, 'objects');
  // Names the store never writes: no suffix, another suffix, a temp-like name, non-canonical
  // escapes (%61 is "a", which the store spells "a"), uppercase, a hidden file.
  for (const name of ['junk', 'real.o.tmp', '%61.o', 'X.o', '.DS_Store', 'dir.d.o~', '%zz.o']) {
    await writeFile(join(objects, name), 'stray');
    await writeFile(join(objects, 'dir.d', name), 'stray');
  }
  await mkdir(join(objects, 'not-a-tree-dir'));
  await writeFile(join(objects, 'not-a-tree-dir', 'x.o'), 'stray');
  t.deepEqual(await allKeys(store), ['dir/real']);
  t.is(await store.get('a'), undefined, 'a non-canonical spelling does not answer for its key');
});

test('fs object store › deleting the last key of a directory removes the directory', async (t) => {
  const dir = await freshDir(t);
  const store = new FsObjectStore({ dir });
  await store.put('x/y/z', utf8('deep'));
  await store.put('x/keep', utf8('kept'));
  await store.delete('x/y/z');
  t.deepEqual((await readdir(join(dir, 'objects', 'x.d'))).sort(), ['keep.o'], 'y.d was pruned');
  await store.delete('x/keep');
  t.deepEqual(await readdir(join(dir, 'objects')), [], 'x.d was pruned');
  await store.put('x/y/z', utf8('again'));
  t.is(text(await store.get('x/y/z')), 'again', 'pruned directories are made again on demand');
});

test('fs object store › a key may be a regular file name inside the root, never outside it', async (t) => {
  const dir = await freshDir(t);
  const store = new FsObjectStore({ dir });
  const tricky = ['...', 'a..b', '.hidden', 'a/.../b', '%2e%2e', '~', 'con', 'a\\..\\b'];
  for (const key of tricky) await store.put(key, utf8(key));
  for (const key of tricky) t.is(text(await store.get(key)), key);
  t.deepEqual(
    (await readdir(dir)).sort(),
    ['objects', 'tmp'],
    'nothing was written beside the tree',
  );
  t.deepEqual(
    (await readdir(join(dir, '..'))).sort(),
    ['store'],
    'nothing was written outside the root',
  );
});

test('fs object store › a body larger than one write round-trips across a restart', async (t) => {
  const dir = await freshDir(t);
  const body = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 31 + 7) & 0xff);
  await new FsObjectStore({ dir }).put('big', body);
  const read = await new FsObjectStore({ dir }).get('big');
  t.true(read !== undefined && Buffer.from(read).equals(Buffer.from(body)));
});
