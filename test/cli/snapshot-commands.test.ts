import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { eventually } from '../hosts/eventually.js';
import { placeAuthority } from '../support/cluster-waits.js';
import { call } from '../support/https-call.js';
import { baton } from './consensus-admin.js';
import { spawnBaton } from './run-baton.js';

async function freshDir(t: import('ava').ExecutionContext, name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `baton-${name}-`));
  t.teardown(async () => {
    const { rm } = await import('node:fs/promises');
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Saves a backup from `url`, checks its file, and restores it into a fresh data dir per member (refusals checked on the way). */
async function saveAndRestore(t: import('ava').ExecutionContext, url: string, token: string, ids: string[], variant: 'stream' | 'authority') {
  const work = await freshDir(t, 'backup');
  const file = join(work, 'backup.ndjson');
  const saved = await baton(url, token, 'snapshot', 'save', file);
  t.is(saved.code, 0, saved.stderr);
  const summary = JSON.parse(saved.stdout) as { index: number; variant: string; voters: string[]; sha256: string };
  t.is(summary.variant, `${variant}-transfer`);
  t.deepEqual(summary.voters, [...ids].sort());
  t.true(summary.index > 0);
  t.is((await stat(file)).mode & 0o777, 0o600);

  // A damaged copy, a copy of the other variant's name and a non-empty dir are refused (exit 1).
  const bytes = await readFile(file, 'utf8');
  const damaged = join(work, 'damaged.ndjson');
  const lines = bytes.split('\n');
  await writeFile(damaged, [lines[0], lines[1].replace(/"/, '" '), ...lines.slice(2)].join('\n'));
  const refusedDamaged = await spawnBaton(['snapshot', 'restore', damaged, '--data-dir', join(work, 'x'), '--json']);
  t.is(refusedDamaged.code, 1);
  t.regex(refusedDamaged.stderr, /checksum mismatch/);
  const other = variant === 'stream' ? 'authority' : 'stream';
  const refusedVariant = await spawnBaton(['snapshot', 'restore', file, '--data-dir', join(work, 'y'), '--variant', other]);
  t.is(refusedVariant.code, 1);
  t.regex(refusedVariant.stderr, new RegExp(`backup of the ${variant}-transfer variant`));
  const refusedNonEmpty = await spawnBaton(['snapshot', 'restore', file, '--data-dir', work]);
  t.is(refusedNonEmpty.code, 1);
  t.regex(refusedNonEmpty.stderr, /is not empty/);

  const restoredRoot = await freshDir(t, 'restored');
  for (const id of ids) {
    const restored = await spawnBaton(['snapshot', 'restore', file, '--data-dir', join(restoredRoot, id), '--variant', variant, '--json']);
    t.is(restored.code, 0, restored.stderr);
    t.like(JSON.parse(restored.stdout), { index: summary.index, raftDir: join(restoredRoot, id, 'raft') });
  }
  return restoredRoot;
}

test.serial('stream cluster: snapshot save, restore into fresh data dirs, and a cluster started on them holds every stream', async (t) => {
  const first = await startNodeProcesses(t, streamClusterVariant);
  const operator = { authorization: `Bearer ${first.token}` };
  const url = first.nodes[0].url;
  const streams = ['orders', 'payments', 'audit-log', 'clicks'];
  for (const stream of streams) {
    await eventually(async () => {
      const created = await call(`${url}/v1/admin/streams`, { method: 'POST', headers: operator, body: { stream } });
      return created.status === 201 || created.status === 200;
    }, `stream ${stream} created`, 90_000);
  }
  const ids = first.nodes.map((n) => n.id);
  const restoredRoot = await saveAndRestore(t, first.nodes[1].url, first.token, ids, 'stream');
  for (const id of ids) await first.stop(id);

  const second = await startNodeProcesses(t, streamClusterVariant, {
    configure: (config, node) => {
      config.consensus.options.dataDir = join(restoredRoot, node.id, 'raft');
    },
  });
  for (const node of second.nodes) {
    let listed: string[] = [];
    await eventually(async () => {
      const answer = await call(`${node.url}/v1/admin/streams?limit=100`, { headers: { authorization: `Bearer ${second.token}` } });
      listed = answer.status === 200 ? (answer.body as { streams: { stream: string }[] }).streams.map((s) => s.stream) : [];
      return listed.length === streams.length;
    }, `every stream on ${node.id} of the restored cluster`, 90_000);
    t.deepEqual(listed.sort(), [...streams].sort(), node.id);
  }
});

test.serial('authority cluster: snapshot save, restore into fresh data dirs, and a cluster started on them holds every authority', async (t) => {
  const first = await startNodeProcesses(t, authorityClusterVariant);
  const control = first.nodes[0].url;
  const placed = { proj: 'east', docs: 'west', web: 'north' } as Record<string, string>;
  for (const [authority, dc] of Object.entries(placed)) await placeAuthority(control, first.token, authority, dc);
  const ids = first.nodes.map((n) => n.id);
  const restoredRoot = await saveAndRestore(t, first.nodes[2].url, first.token, ids, 'authority');
  for (const id of ids) await first.stop(id);

  const second = await startNodeProcesses(t, authorityClusterVariant, {
    configure: (config, node) => {
      config.dataDir = join(restoredRoot, node.id);
    },
  });
  for (const node of second.nodes) {
    for (const [authority, dc] of Object.entries(placed)) {
      let home: unknown;
      await eventually(async () => {
        const answer = await call(`${node.url}/availability/v1/authorities/${authority}`, { headers: { authorization: `Bearer ${second.token}` } });
        home = answer.body;
        return answer.status === 200;
      }, `${authority} known on ${node.id} of the restored cluster`, 90_000);
      t.like(home, { authority, home: dc, epoch: 1 }, `${authority} on ${node.id}`);
    }
  }
});
