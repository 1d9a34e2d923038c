import test from 'ava';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { makeTempDir, type TempDir } from '@baton/testing/internal/temp-dir.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { repairRaftLog } from '@baton/plugin-raft/internal/storage/log-repair.js';
import { RaftStorageCorruptError } from '@baton/plugin-raft/internal/storage/raft-storage.js';
import { HttpCluster } from './support/http-cluster.js';

test('a member whose log was damaged refuses to start; repaired, it catches up from the other voters and votes again', async (t) => {
  const ids = ['h1', 'h2', 'h3'];
  const dirs: TempDir[] = [];
  for (const _ of ids) dirs.push(await makeTempDir('raft-repaired'));
  const dirOf = Object.fromEntries(ids.map((id, i) => [id, dirs[i].path]));
  const c = new HttpCluster(ids, dirOf);
  t.teardown(async () => {
    await c.close();
    for (const d of dirs) await d.remove();
  });
  await c.listenAll();
  for (const id of ids) await c.start(id);
  await c.until(() => c.leader() !== undefined, 10_000, 'a leader');
  const victim = ids.find((id) => c.members.get(id)!.raft !== c.leader())!;
  for (let i = 0; i < 20; i++) await c.leader()!.propose({ op: 'put', key: `k${i}`, value: String(i) });
  const target = c.leader()!.view().applied.index;
  await c.until(() => c.members.get(victim)!.raft.view().applied.index >= target, 10_000, `${victim} applied everything`);
  await c.stop(victim);

  // A flipped byte in the middle of its log.
  const [segment] = (await readdir(dirOf[victim])).filter((n) => n.endsWith('.log'));
  const path = join(dirOf[victim], segment);
  const bytes = await readFile(path);
  const at = bytes.indexOf('"value":"7"');
  bytes[at + 3] ^= 0x01;
  await writeFile(path, bytes);
  const refused = await t.throwsAsync(new FileRaftStorage(new DirectoryFiles(dirOf[victim])).load(), { instanceOf: RaftStorageCorruptError });
  t.like(refused, { store: 'raft-log', file: path, offset: bytes.lastIndexOf(0x0a, at) + 1 });

  const report = await repairRaftLog(dirOf[victim]);
  t.is(report.outcome, 'repaired');
  t.true(report.lastIndex < target, 'the repair cut entries the member had applied');
  t.true(report.hardState!.catchUpTo! >= target);

  // The cluster went on meanwhile.
  for (let i = 20; i < 25; i++) await c.leader()!.propose({ op: 'put', key: `k${i}`, value: String(i) });
  const raft = await c.start(victim);
  t.true(c.logger.records.some((r) => /log was repaired/.test(r.msg ?? '')), 'the start says the member is catching up');
  const now = c.leader()!.view().applied.index;
  await c.until(() => raft.view().applied.index >= now, 10_000, `${victim} caught up`);
  t.is(raft.view().state.data.k7, '7', 'the damaged entry came back from the other voters');
  t.is(raft.view().state.data.k24, '24');

  // Caught up, its vote counts again: with the old leader gone, the two others elect one.
  const oldLeader = ids.find((id) => c.members.get(id)!.raft === c.leader())!;
  await c.stop(oldLeader);
  await c.until(() => c.leader() !== undefined, 15_000, 'a leader of the two left');
  const receipt = await c.leader()!.propose({ op: 'put', key: 'after', value: 'ok' });
  t.true(receipt.position.index > now);
  await c.stop(victim);
  t.is((await new FileRaftStorage(new DirectoryFiles(dirOf[victim])).load()).hardState.catchUpTo, undefined, 'the guard was cleared on disk');
});
