import test from 'ava';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { recordFileName } from '@baton/plugin-fs/internal/audit-record-file.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { ADMIN, startNode, transfer, waitFor } from '../hosts/authority-node/node-harness.js';
import { runBaton } from './run-baton.js';

const cwd = process.cwd();

/** An authority node whose proj trail holds an establish and a planned transfer, both stored. */
async function nodeWithTrail(overrides: Parameters<typeof startNode>[0]) {
  const n = await startNode(overrides);
  const established = await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
  if (established.status !== 200) throw new Error(`establish answered ${established.status}`);
  n.probe.answer('west', 0);
  const moved = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'move-1', body: transfer });
  if (moved.status !== 200) throw new Error(`transfer answered ${moved.status}`);
  await waitFor(() => n.consensus.view().state.pending.size === 0, 'both records stored');
  const verify = (...args: string[]) => runBaton(['audit', 'verify', '--authority', 'proj', '--url', n.control, '--token', ADMIN, ...args], { cwd });
  return { n, verify, establishedAt: established.body.commit_index as number };
}

test('baton audit verify --authority checks an authority trail in the fs audit store and names an edited record', async (t) => {
  const dir = await makeTempDir('authority-audit-verify');
  t.teardown(() => dir.remove());
  const { n, verify, establishedAt } = await nodeWithTrail({ dataDir: dir.path, defaultAuditStore: true });
  t.teardown(() => n.host.stop());

  const verified = await verify();
  t.is(verified.code, ExitCode.Ok, verified.stderr);
  t.regex(verified.stdout, /^trail proj: 2 records verified, the chain matches the replicated anchors/);

  // Someone rewrites who established proj, in the member's own record file.
  // The host's default store lives under <dataDir>/audit, and keeps its files in an audit/ of its own there.
  const trails = join(dir.path, 'audit', 'audit', 'records');
  const [trailDir] = (await readdir(trails)).filter((name) => name.endsWith('.a'));
  const file = join(trails, trailDir!, recordFileName(establishedAt, 0));
  const stored = JSON.parse(await readFile(file, 'utf8')) as { record: AuditRecord };
  t.is(stored.record.kind, 'authority_established');
  stored.record.actor = 'mallory';
  await writeFile(file, `${JSON.stringify(stored)}\n`);

  const broken = await verify();
  t.is(broken.code, ExitCode.Failed);
  t.true(broken.stderr.includes(`record ${establishedAt}-0`), broken.stderr);
  t.like(JSON.parse((await verify('-o', 'json')).stdout), { ok: false, id: `${establishedAt}-0`, trail: 'proj' });
});

test('baton audit verify --authority names a record edited in the Redis audit store', async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.close());
  const keyPrefix = `verify-${process.pid}:`;
  const { n, verify } = await nodeWithTrail({ auditStore: { use: 'redis-audit-store', options: { url: redis.url, keyPrefix } } });
  t.teardown(() => n.host.stop());
  t.is((await verify()).code, ExitCode.Ok);

  // The planned transfer's reason rewritten in both places the store keeps it.
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit().then(() => undefined));
  const key = `${keyPrefix}audit:authority:proj`;
  const [original] = (await raw.zrange(key, 0, -1)).filter((m) => JSON.parse(m).id === 'move-1');
  t.truthy(original, 'the planned record is stored in Redis');
  const record = JSON.parse(original!) as AuditRecord;
  const forged = JSON.stringify({ ...record, reason: 'nothing to see here' });
  await raw.multi().zrem(key, original!).zadd(key, record.commit_index, forged).hset(`${keyPrefix}audit:by-id`, record.id, forged).exec();

  const broken = await verify();
  t.is(broken.code, ExitCode.Failed);
  t.true(broken.stderr.includes('record move-1'), broken.stderr);
  t.regex(broken.stderr, /hashes to/);
});

test('baton audit list and show --authority read an authority trail from the control listener, newest first, by kind and by id', async (t) => {
  const { n, establishedAt } = await nodeWithTrail({});
  t.teardown(() => n.host.stop());
  const baton = (...args: string[]) => runBaton(['audit', ...args, '--url', n.control, '--token', ADMIN], { cwd });

  const listed = await baton('list', '--authority', 'proj', '-o', 'json');
  t.is(listed.code, ExitCode.Ok, listed.stderr);
  const page = JSON.parse(listed.stdout) as { trail: string; records: { id: string; kind: string }[] };
  t.is(page.trail, 'proj');
  t.deepEqual(page.records.map((r) => [r.id, r.kind]), [['move-1', 'planned_transfer'], [`${establishedAt}-0`, 'authority_established']]);
  const human = await baton('list', '--authority', 'proj');
  t.regex(human.stdout, /^ID\s+TIME\s+KIND/);
  t.regex(human.stdout, /authority_established\s+authority\/proj/);
  const byKind = JSON.parse((await baton('list', '--authority', 'proj', '--kind', 'authority_established', '-o', 'json')).stdout) as typeof page;
  t.deepEqual(byKind.records.map((r) => r.kind), ['authority_established']);

  const shown = await baton('show', `${establishedAt}-0`, '--authority', '-o', 'json');
  t.is(shown.code, ExitCode.Ok, shown.stderr);
  t.like(JSON.parse(shown.stdout), { id: `${establishedAt}-0`, kind: 'authority_established', subject: 'proj', to: 'east' });
  const missing = await baton('show', '999999-0', '--authority');
  t.is(missing.code, ExitCode.Failed);
  t.regex(missing.stderr, /404/);
  t.is((await baton('list', '--authority', 'nobody')).code, ExitCode.Failed, 'an authority without a home answers 400');
  t.is((await baton('list', '--authority', 'proj', '--subject', 'x')).code, ExitCode.Usage);
});
