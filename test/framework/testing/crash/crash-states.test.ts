import test from 'ava';
import { join } from 'node:path';
import { DurableFiles } from '@baton/kernel/internal/durable-files.js';
import { CrashModel, type CrashImage } from '@baton/testing/internal/crash/crash-states.js';
import { RecordingFileSystem } from '@baton/testing/internal/crash/recording-file-system.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const text = (s: string) => new TextEncoder().encode(s);
const show = (image: CrashImage) =>
  Object.fromEntries([
    ...image.directories.map((d) => [d, 'dir']),
    ...image.files.map((f) => [f.path, new TextDecoder().decode(f.bytes)]),
  ]);

/** Records what `steps` issue through DurableFiles on a fresh directory, and the model of that log. */
async function recorded(t: { teardown(fn: () => Promise<void>): void }, steps: (files: DurableFiles, root: string) => Promise<void>) {
  const dir = await makeTempDir('crash-states');
  t.teardown(dir.remove);
  const recording = new RecordingFileSystem(dir.path);
  await steps(new DurableFiles(recording), dir.path);
  return { model: new CrashModel(recording.operations), operations: recording.operations };
}

/** Every distinct tree sampled at `point`, as plain objects. */
function sampled(model: CrashModel, point: number, rounds = 300) {
  const trees = new Map<string, Record<string, string>>();
  for (let round = 0; round < rounds; round++) {
    const state = model.state(point, 'sampled', new SeededRng(round));
    trees.set(state.signature, show(state.image));
  }
  return [...trees.values()];
}

test('a fsynced file whose directory was not fsynced may vanish; once the directory is, it stays', async (t) => {
  const { model, operations } = await recorded(t, async (files, root) => {
    const log = await files.openAppend(join(root, 'log'));
    await log.append(text('one'));
    await log.sync();
    await log.close();
  });
  t.deepEqual(operations.map((o) => o.kind), ['create', 'write', 'fdatasync', 'fsync']);
  t.deepEqual(show(model.state(3, 'lose-unsynced').image), {}, 'before the directory fsync, the name is not durable');
  t.deepEqual(show(model.state(4, 'lose-unsynced').image), { log: 'one' });
  t.deepEqual(show(model.state(2, 'lose-unsynced').image), {});
  t.deepEqual(show(model.state(2, 'keep-everything').image), { log: 'one' });
});

test('unsynced appends tear at any byte, after the synced ones', async (t) => {
  const { model, operations } = await recorded(t, async (files, root) => {
    const log = await files.openAppend(join(root, 'log'));
    await log.append(text('ab'));
    await log.sync();
    await log.append(text('cd'));
    await log.append(text('ef'));
    await log.close();
  });
  const contents = sampled(model, operations.length).map((tree) => tree.log).filter((c) => c !== undefined);
  for (const prefix of ['ab', 'abc', 'abcd', 'abcde', 'abcdef']) t.true(contents.includes(prefix), `${prefix} is a possible state`);
  t.true(contents.includes('ab\0'), 'an extending write may leave zeros');
  t.false(contents.some((c) => !c.startsWith('ab')), 'synced bytes are never lost');
});

test('a replace leaves the old file or the new one, never a mix, and the new one once the directory is fsynced', async (t) => {
  const { model, operations } = await recorded(t, async (files, root) => {
    await files.replace(join(root, 'f'), text('old'));
    await files.replace(join(root, 'f'), text('new'));
  });
  const firstDone = operations.findIndex((o) => o.kind === 'fsync' && o.path === '') + 1;
  for (let point = firstDone; point < operations.length; point++) {
    for (const tree of sampled(model, point, 60)) t.true(tree.f === 'old' || tree.f === 'new', `point ${point}: ${JSON.stringify(tree)}`);
  }
  t.deepEqual(show(model.state(operations.length, 'lose-unsynced').image), { f: 'new' });
});

test('a name change is never kept without the earlier changes of the same names, nor a directory removed that was not empty', async (t) => {
  const { model, operations } = await recorded(t, async (files, root) => {
    await files.createDirectory(join(root, 'd'));
    await files.writeNew(join(root, 'd', 'x'), text('x'));
    await files.discard(join(root, 'd', 'x'));
    await files.removeEmptyDirectory(join(root, 'd'));
  });
  t.deepEqual(operations.map((o) => o.kind), ['mkdir', 'fsync', 'create', 'write', 'fsync', 'unlink', 'rmdir']);
  const trees = sampled(model, operations.length);
  t.true(trees.some((tree) => tree.d === 'dir' && tree['d/x'] === 'x'), 'the unlink may be lost');
  t.true(trees.some((tree) => Object.keys(tree).length === 0), 'or everything kept');
  t.false(trees.some((tree) => tree.d === undefined && JSON.stringify(tree) !== '{}'), 'never a file without its directory');
  for (const tree of trees) if (tree['d/x'] !== undefined) t.is(tree.d, 'dir', 'the rmdir is lost whenever the unlink is');
});
