import test from 'ava';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreUnavailableError } from '@baton/contracts/internal/object-store.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { FsObjectStore } from '@baton/plugin-fs/internal/fs-object-store.js';

const down = { instanceOf: StoreUnavailableError };

test('fs object store › a directory under a regular file cannot open, and says where', async (t) => {
  const temp = await makeTempDir('baton-fs-down');
  t.teardown(temp.remove);
  await writeFile(join(temp.path, 'file'), 'a regular file');
  const dir = join(temp.path, 'file', 'store');
  const store = new FsObjectStore({ dir });
  const error = await t.throwsAsync(store.start(), down);
  t.true(error!.message.includes(dir), error!.message);
  await t.throwsAsync(store.put('k', new Uint8Array([1])), down);
  await t.throwsAsync(store.get('k'), down);
  await t.throwsAsync(store.head('k'), down);
  await t.throwsAsync(store.list(''), down);
  await t.throwsAsync(store.delete('k'), down);
});

test('fs object store › once its directory is removed, a missing key is an outage, not undefined', async (t) => {
  const temp = await makeTempDir('baton-fs-down');
  t.teardown(temp.remove);
  const dir = join(temp.path, 'store');
  const store = new FsObjectStore({ dir });
  await store.put('k', new Uint8Array([1]));
  await rm(dir, { recursive: true });
  await t.throwsAsync(store.get('k'), down);
  await t.throwsAsync(store.head('k'), down);
  await t.throwsAsync(store.list(''), down, 'an empty listing would be a wrong answer');
  await t.throwsAsync(store.delete('k'), down);
  await t.throwsAsync(store.put('k/below', new Uint8Array([1])), down);
  await t.throwsAsync(access(join(dir, 'objects')), undefined, 'a put did not recreate an empty store');
});

test('fs object store › a directory where an object file should be is an outage', async (t) => {
  const temp = await makeTempDir('baton-fs-down');
  t.teardown(temp.remove);
  const store = new FsObjectStore({ dir: temp.path });
  await store.put('k', new Uint8Array([1]));
  await rm(join(temp.path, 'objects', 'k.o'));
  await mkdir(join(temp.path, 'objects', 'k.o'));
  await t.throwsAsync(store.get('k'), down);
  await t.throwsAsync(store.head('k'), down);
});
