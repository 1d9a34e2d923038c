import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { FileWal } from '@baton/stream-transfer/internal/file-wal.js';
import type { WalEntry } from '@baton/stream-transfer/internal/wal.js';
import { encodeEntries } from '@baton/stream-transfer/internal/wal-codec.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { spawnBaton, collectRun, type BatonRun } from './run-baton.js';
import { eventually } from './stream-cluster.js';
import { workDir } from './temp-project.js';

const STREAM_MAIN = fileURLToPath(new URL('../../../hosts/stream-node/dist/main.js', import.meta.url));

const entries: WalEntry[] = [
  { t: 'open', stream: 'orders', epoch: 1, next: 0, producers: {} },
  { t: 'records', stream: 'orders', epoch: 1, first: 0, bodies: ['a', 'b'] },
  { t: 'records', stream: 'orders', epoch: 1, first: 2, bodies: ['c'] },
  { t: 'records', stream: 'orders', epoch: 1, first: 3, bodies: ['d', 'e', 'f'] },
  { t: 'flushed', stream: 'orders', epoch: 1, upTo: 6 },
  { t: 'closed', stream: 'orders', epoch: 1, tail: 6, producers: {} },
];
const offsetOf = (i: number) => encodeEntries(entries.slice(0, i)).length;

/** A stream node's config under `dir`: its own data dir, WAL dir and a free port. */
async function nodeConfig(dir: string): Promise<{ file: string; walDir: string }> {
  const walDir = join(dir, 'data', 'wal');
  const file = join(dir, 'node.json');
  const config = {
    node: { self: 'n1', http: { port: 0 }, wal: { kind: 'file', dir: walDir }, tokens: [{ token: 'repair-test', principal: 'ops', scopes: ['admin'] }] },
    dataDir: join(dir, 'data'),
    log: { level: 'warn' },
  };
  await writeFile(file, JSON.stringify(config));
  return { file, walDir };
}

function startNode(config: string): { child: ChildProcess; run: Promise<BatonRun>; stdout: () => string } {
  const child = spawn(process.execPath, [STREAM_MAIN, config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const run = new Promise<BatonRun>((resolve, reject) => collectRun(child, resolve, reject));
  return { child, run, stdout: () => stdout };
}

test('a stream node refuses to start on a damaged WAL, naming the byte and the command; baton repair wal cuts it and the node starts', async (t) => {
  t.timeout(120_000);
  const dir = await workDir(t);
  const { file, walDir } = await nodeConfig(dir);
  const wal = await FileWal.open(walDir);
  await wal.append(entries);
  await wal.close();
  const walFile = join(walDir, 'streams.wal');
  const bytes = await readFile(walFile);
  bytes[offsetOf(2) + 20] ^= 0x01;
  await writeFile(walFile, bytes);

  const refused = await startNode(file).run;
  t.is(refused.code, 1, refused.stderr);
  t.regex(refused.stderr, new RegExp(`stream node failed to start: stream WAL ${walFile} is damaged at byte ${offsetOf(2)}: its checksum does not match, and 3 intact entries follow it`));
  t.true(refused.stderr.includes(`"baton repair wal ${walDir}"`), refused.stderr);
  t.deepEqual(await readFile(walFile), bytes, 'the refused start changed nothing');

  const dry = await spawnBaton(['repair', 'wal', walDir, '--dry-run']);
  t.is(dry.code, 0, dry.stderr);
  t.regex(dry.stdout, /^would repair .*streams\.wal: damaged at byte \d+/);
  t.regex(dry.stdout, /Nothing was changed \(--dry-run\)/);
  t.deepEqual(await readFile(walFile), bytes);

  const repaired = await spawnBaton(['repair', 'wal', walDir]);
  t.is(repaired.code, 0, repaired.stderr);
  t.is(repaired.stderr, '');
  const lines = repaired.stdout.split('\n');
  t.is(lines[0], `repaired ${walFile}: damaged at byte ${offsetOf(2)} (its checksum does not match)`);
  t.is(lines[1], `  damaged file kept as ${join(walDir, 'damaged-1', 'streams.wal')}`);
  t.is(lines[2], `  kept 2 entries (bytes 0-${offsetOf(2) - 1})`);
  t.is(lines[3], `  dropped ${bytes.length - offsetOf(2)} bytes: the damaged entry and 3 intact entries after it:`);
  t.deepEqual(lines.slice(4, 7), [
    `    byte ${offsetOf(3)}: records stream orders epoch 1, offsets 3-5 (3 records)`,
    `    byte ${offsetOf(4)}: flushed stream orders epoch 1 up to offset 6`,
    `    byte ${offsetOf(5)}: closed stream orders epoch 1 at tail 6`,
  ]);
  t.deepEqual(await readFile(join(walDir, 'damaged-1', 'streams.wal')), bytes, 'the damaged file is kept');

  const node = startNode(file);
  t.teardown(() => void node.child.kill('SIGKILL'));
  await eventually(() => /stream node listening on http/.test(node.stdout()) || node.child.exitCode !== null, 'the node to listen', 60_000);
  t.regex(node.stdout(), /stream node listening on http/);
  // While it runs, the repair refuses to touch its directory.
  const busy = await spawnBaton(['repair', 'wal', walDir]);
  t.is(busy.code, 1);
  t.regex(busy.stderr, new RegExp(`belongs to a running node \\(pid ${node.child.pid} holds .*node\\.lock\\): stop it, then run the repair again`));
  node.child.kill('SIGTERM');
  t.is((await node.run).code, 0);
});

test('baton repair raft cuts a damaged log, keeps the hard state with the catch-up guard, and says so; --json for scripts', async (t) => {
  const dir = await workDir(t);
  const raftDir = join(dir, 'raft');
  await mkdir(raftDir);
  const storage = new FileRaftStorage(new DirectoryFiles(raftDir));
  await storage.load();
  for (let i = 1; i <= 12; i++) {
    await storage.persist({ entries: [{ index: i, term: 2, type: 'normal', data: { put: `k${i}` } }], hardState: { term: 2, vote: 'n2', commit: i - 1 } });
  }
  await storage.close();
  const [segment] = (await readdir(raftDir)).filter((n) => n.endsWith('.log'));
  const bytes = await readFile(join(raftDir, segment));
  const at = bytes.indexOf('"k5"');
  bytes[at + 1] ^= 0x04;
  await writeFile(join(raftDir, segment), bytes);
  const offset = bytes.lastIndexOf(0x0a, at) + 1;

  const json = await spawnBaton(['repair', 'raft', raftDir, '--dry-run', '--json']);
  t.is(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { outcome: string; repairs: { problem: { offset: number; store: string }; droppedEntries: unknown[] }[] };
  t.like(report, { outcome: 'would-repair' });
  t.like(report.repairs[0], { problem: { store: 'raft-log', offset } });
  t.is(report.repairs[0].droppedEntries.length, 7);

  const run = await spawnBaton(['repair', 'raft', raftDir]);
  t.is(run.code, 0, run.stderr);
  const out = run.stdout;
  t.true(out.startsWith(`repaired ${raftDir}: ${segment} at byte ${offset} (its checksum does not match; 15 intact records follow it)\n`), out);
  t.regex(out, new RegExp(`  kept aside under ${join(raftDir, 'damaged-1')}: ${segment}\n`));
  t.regex(out, new RegExp(`  cut ${segment} to its first ${offset} bytes, then the hard state\n`));
  t.regex(out, / {2}dropped 7 intact entries \(6-12\) and \d+ damaged bytes\n/);
  t.regex(out, / {2}hard state kept: term 2, vote n2, commit 3\n/);
  t.regex(out, / {2}the log now ends at index 4\n/);
  t.regex(out, /neither votes nor campaigns until a leader has matched\n {2}its log up to index (1[2-9]|[2-9]\d)/);

  const recovered = await new FileRaftStorage(new DirectoryFiles(raftDir)).load();
  t.deepEqual(recovered.entries.map((e) => e.index), [1, 2, 3, 4]);
  t.like(recovered.hardState, { term: 2, vote: 'n2', commit: 3 });
  const again = await spawnBaton(['repair', 'raft', raftDir]);
  t.is(again.code, 0);
  t.is(again.stdout, `${raftDir}: intact (log up to index 4, term 2); nothing to repair\n`);
});

test('baton repair on a directory without a WAL or a Raft log is refused with what to give', async (t) => {
  const dir = await workDir(t);
  const wal = await spawnBaton(['repair', 'wal', dir]);
  t.is(wal.code, 1);
  t.regex(wal.stderr, /^baton: there is no stream WAL in .* \(no streams\.wal\): give the node's WAL directory/);
  const raft = await spawnBaton(['repair', 'raft', join(dir, 'nowhere')]);
  t.is(raft.code, 1);
  t.regex(raft.stderr, /does not exist: give the member's Raft directory/);
  const usage = await spawnBaton(['repair', 'wal']);
  t.is(usage.code, 2);
});
