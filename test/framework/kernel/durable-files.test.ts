import test from 'ava';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DurableFiles } from '@baton/kernel/internal/durable-files.js';
import { nodeFileSystem, type FileSystem } from '@baton/kernel/internal/file-system.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const bytes = (s: string) => new TextEncoder().encode(s);

/** The real file system, with every call that changes the disk (or syncs it) written down in order. */
function counted(): { fs: FileSystem; calls: string[] } {
  const calls: string[] = [];
  const note = (what: string): void => void calls.push(what);
  const fs: FileSystem = {
    async openForWrite(path, mode, permissions) {
      const file = await nodeFileSystem.openForWrite(path, mode, permissions);
      note(`open ${mode} ${path}`);
      return {
        write: (b) => file.write(b).then(() => note(`write ${path}`)),
        truncate: (n) => file.truncate(n).then(() => note(`truncate ${path}`)),
        sync: () => file.sync().then(() => note(`fsync ${path}`)),
        datasync: () => file.datasync().then(() => note(`fdatasync ${path}`)),
        close: () => file.close(),
      };
    },
    mkdir: (p, m) => nodeFileSystem.mkdir(p, m).then(() => note(`mkdir ${p}`)),
    rename: (a, b) => nodeFileSystem.rename(a, b).then(() => note(`rename ${a} ${b}`)),
    link: (a, b) => nodeFileSystem.link(a, b).then(() => note(`link ${a} ${b}`)),
    unlink: (p) => nodeFileSystem.unlink(p).then(() => note(`unlink ${p}`)),
    rmdir: (p) => nodeFileSystem.rmdir(p).then(() => note(`rmdir ${p}`)),
    chmod: (p, m) => nodeFileSystem.chmod(p, m).then(() => note(`chmod ${p}`)),
    syncDirectory: (p) => nodeFileSystem.syncDirectory(p).then(() => note(`fsync-dir ${p}`)),
    readdir: (p) => nodeFileSystem.readdir(p),
  };
  return { fs, calls };
}

async function fresh(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await makeTempDir('durable-files');
  t.teardown(dir.remove);
  return dir.path;
}

test('replace: the temp file is fsynced before the rename, and the directory after it', async (t) => {
  const dir = await fresh(t);
  const { fs, calls } = counted();
  const files = new DurableFiles(fs);
  const path = join(dir, 'state.json');
  await files.replace(path, bytes('one'));
  await files.replace(path, bytes('two'));
  t.is(await readFile(path, 'utf8'), 'two');
  t.deepEqual(await readdir(dir), ['state.json'], 'no temp file is left');
  const temp = `${path}.tmp`;
  t.deepEqual(calls.slice(0, 5), [`open create ${temp}`, `write ${temp}`, `fsync ${temp}`, `rename ${temp} ${path}`, `fsync-dir ${dir}`]);
});

test('replace: a temp file an earlier crash left is replaced, and permissions are exact whatever the umask', async (t) => {
  const dir = await fresh(t);
  const files = new DurableFiles();
  const path = join(dir, 'secret');
  await writeFile(`${path}.tmp`, 'half written by a crashed process', { mode: 0o666 });
  await files.replace(path, bytes('token'), { permissions: 0o600 });
  t.is(await readFile(path, 'utf8'), 'token');
  t.is((await stat(path)).mode & 0o777, 0o600);
  await files.replace(path, bytes('wider'), { permissions: 0o640 });
  t.is((await stat(path)).mode & 0o777, 0o640);
});

test('createIfAbsent: links into place once, answers false after, and leaves no temp file', async (t) => {
  const dir = await fresh(t);
  const { fs, calls } = counted();
  const files = new DurableFiles(fs);
  const path = join(dir, 'object');
  t.true(await files.createIfAbsent(path, bytes('first')));
  t.true(calls.includes(`fsync-dir ${dir}`), 'the new name is made durable');
  t.false(await files.createIfAbsent(path, bytes('second')));
  t.is(await readFile(path, 'utf8'), 'first');
  t.deepEqual(await readdir(dir), ['object']);
});

test('an append-only file: fdatasync per sync, the directory fsynced with the first sync only', async (t) => {
  const dir = await fresh(t);
  const { fs, calls } = counted();
  const files = new DurableFiles(fs);
  const path = join(dir, 'log');
  const file = await files.openAppend(path);
  await file.append(bytes('a'));
  await file.sync();
  await file.append(bytes('b'));
  await file.sync();
  await file.close();
  t.is(await readFile(path, 'utf8'), 'ab');
  t.deepEqual(calls, [`open append ${path}`, `write ${path}`, `fdatasync ${path}`, `fsync-dir ${dir}`, `write ${path}`, `fdatasync ${path}`]);
  // Reopened (a restarted process): the name may never have been made durable, so once more.
  const again = await files.openAppend(path);
  await again.append(bytes('c'));
  await again.sync();
  await again.close();
  t.is(calls.filter((c) => c === `fsync-dir ${dir}`).length, 2);
});

test('createDirectory: parents made one by one, each parent fsynced, permissions exact on an existing one', async (t) => {
  const dir = await fresh(t);
  const { fs, calls } = counted();
  const files = new DurableFiles(fs);
  const deep = join(dir, 'a', 'b');
  t.true(await files.createDirectory(deep, { parents: true, permissions: 0o700 }));
  t.deepEqual(calls.filter((c) => !c.startsWith('chmod')), [`mkdir ${join(dir, 'a')}`, `fsync-dir ${dir}`, `mkdir ${deep}`, `fsync-dir ${join(dir, 'a')}`]);
  t.is((await stat(deep)).mode & 0o777, 0o700);
  await files.fs.chmod(deep, 0o755);
  t.false(await files.createDirectory(deep, { permissions: 0o700 }), 'it existed');
  t.is((await stat(deep)).mode & 0o777, 0o700, 'an existing directory is narrowed');
  await t.throwsAsync(files.createDirectory(join(dir, 'missing', 'c')), { code: 'ENOENT' }, 'no parents unless asked');
});

test('remove and truncate are durable; remove of a missing file answers false', async (t) => {
  const dir = await fresh(t);
  const { fs, calls } = counted();
  const files = new DurableFiles(fs);
  const path = join(dir, 'f');
  await writeFile(path, 'abcdef');
  await files.truncate(path, 3);
  t.is(await readFile(path, 'utf8'), 'abc');
  t.true(calls.includes(`fsync ${path}`));
  t.true(await files.remove(path));
  t.true(calls.includes(`fsync-dir ${dir}`));
  t.false(await files.remove(path));
});

test('removeTree clears a directory of leftovers, nested ones included, and a missing one is fine', async (t) => {
  const dir = await fresh(t);
  const files = new DurableFiles();
  await files.createDirectory(join(dir, 'junk', 'deeper'), { parents: true });
  await writeFile(join(dir, 'junk', 'x'), 'x');
  await writeFile(join(dir, 'junk', 'deeper', 'y'), 'y');
  await files.removeTree(join(dir, 'junk'));
  t.deepEqual(await readdir(dir), []);
  await t.notThrowsAsync(files.removeTree(join(dir, 'junk')));
});
