import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { recordFileName } from '@baton/plugin-fs/internal/audit-record-file.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { runBaton } from './run-baton.js';
import { eventually, startStreamCluster } from './stream-cluster.js';

const cwd = process.cwd();

test('audit list, show and verify read the trail; an edited record file is named by verify', async (t) => {
  const dir = await makeTempDir('cli-audit');
  t.teardown(() => dir.remove());
  const cluster = await startStreamCluster(t, ['n1', 'n2'], { auditDir: dir.path });
  const baton = (...args: string[]) => runBaton(args, { cwd, env: cluster.env });
  t.is((await baton('streams', 'create', 'orders', '--owner', 'n1')).code, ExitCode.Ok);
  await cluster.writable('orders');
  const moved = await baton('streams', 'transfer', 'orders', '--to', 'n2');
  t.is(moved.code, ExitCode.Ok, moved.stderr);
  const listed = async () => JSON.parse((await baton('audit', 'list', '-o', 'json')).stdout) as { records: { id: string; kind: string; actor: string; cause?: string; commit_index: number; seq?: number }[] };
  await eventually(async () => (await listed()).records.some((r) => r.kind === 'transfer_completed'), 'the completion in n1\'s store');

  const table = await baton('audit', 'list');
  t.is(table.code, ExitCode.Ok, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^ID\s+TIME\s+KIND\s+SUBJECT\s+MOVE\s+EPOCH\s+ACTOR\s+CAUSE\s+REASON$/);
  t.regex(lines[1], /transfer_completed\s+stream\/orders\s+n1 -> n2\s+1->2\s+system:handoff/);

  const proposals = JSON.parse((await baton('audit', 'list', '--kind', 'transfer_proposed', '--subject', 'orders', '-o', 'json')).stdout);
  t.is(proposals.records.length, 1);
  const [proposal] = proposals.records;
  t.like(proposal, { actor: 'ops', from: 'n1', to: 'n2', subject: 'orders' });
  const shown = await baton('audit', 'show', proposal.id, '-o', 'yaml');
  t.is(shown.code, ExitCode.Ok, shown.stderr);
  t.regex(shown.stdout, /kind: transfer_proposed/);
  t.deepEqual((await baton('audit', 'list', '-o', 'name')).stdout.trimEnd().split('\n'), (await listed()).records.map((r) => r.id));

  const verified = await baton('audit', 'verify');
  t.is(verified.code, ExitCode.Ok, verified.stderr);
  t.regex(verified.stdout, /records verified/);

  // Someone rewrites the reason of the proposal in n1's store: the chain no longer holds there.
  const file = join(dir.path, 'n1', 'audit', 'records', 'streams.a', recordFileName(proposal.commit_index, proposal.seq ?? 0));
  const stored = JSON.parse(await readFile(file, 'utf8'));
  stored.record.reason = 'nothing to see here';
  await writeFile(file, `${JSON.stringify(stored)}\n`);
  const broken = await baton('audit', 'verify');
  t.is(broken.code, ExitCode.Failed);
  t.true(broken.stderr.includes(`record ${proposal.id}`), broken.stderr);
  const report = await baton('audit', 'verify', '-o', 'json');
  t.like(JSON.parse(report.stdout), { ok: false, id: proposal.id });
  // n2's copy is untouched and still verifies.
  const other = await runBaton(['audit', 'verify', '--url', cluster.nodes.get('n2')!.url], { cwd, env: cluster.env });
  t.is(other.code, ExitCode.Ok, other.stderr);

  const unknownKind = await baton('audit', 'list', '--kind', 'nope');
  t.is(unknownKind.code, ExitCode.Failed);
  t.regex(unknownKind.stderr, /kind must be one of/);
});
