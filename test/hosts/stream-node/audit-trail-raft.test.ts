import test from 'ava';
import { join } from 'node:path';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/redis-server.js';
import { verifyTrail } from '@baton/consensus/internal/audit-chain.js';
import type { Host } from '@baton/kernel/internal/host.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { testPeerAuth } from '../../support/peer-auth.js';
import { eventually } from '../eventually.js';

const TOKEN = 'audit-admin';
const IDS = ['n1', 'n2', 'n3'];

interface Record {
  id: string;
  kind: string;
  subject: string;
  actor: string;
  cause?: string;
  evidence?: string;
  from: string | null;
  to: string | null;
  epoch_before?: number;
  epoch_after: number;
  commit_index: number;
  time?: number;
  hash?: string;
}

/**
 * Three stream nodes as a deployment runs them (voters of one Raft over HTTP, each with its own
 * audit store: the default, files under its dataDir), sharing one object store so handoffs and
 * failovers move real streams.
 */
async function startCluster(t: import('ava').ExecutionContext) {
  const dir = await makeTempDir('stream-audit');
  const ports = await Promise.all(IDS.map(() => freeLoopbackPort()));
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const peers = Object.fromEntries(IDS.map((id, i) => [id, urls[i]]));
  const objects = new MemoryObjectStore();
  const hosts: Host[] = IDS.map((id, i) =>
    streamNodeHostBuilder({
      node: {
        self: id,
        address: urls[i],
        http: { port: ports[i], host: '127.0.0.1' },
        wal: { kind: 'memory' },
        tokens: [{ token: TOKEN, principal: 'olivia', scopes: ['admin', 'stream:append', 'stream:read'] }],
      },
      dataDir: join(dir.path, id),
      consensus: { use: 'raft', options: { member: id, voters: IDS, dataDir: join(dir.path, id, 'raft'), tickMs: 10 } },
      peerTransport: { use: 'raft-http-transport', options: { member: id, peers } },
      peerAuth: testPeerAuth(id, IDS),
      log: { level: 'silent' },
    })
      .value(OBJECT_STORE, objects)
      .build(),
  );
  const running = new Set<Host>();
  t.teardown(async () => {
    for (const host of [...running].reverse()) await host.stop();
    await dir.remove();
  });
  // Started together: a Raft of three elects no leader until two are up.
  await Promise.all(hosts.map(async (host) => (await host.start(), running.add(host))));
  const stop = async (i: number) => {
    await hosts[i].stop();
    running.delete(hosts[i]);
  };
  return { hosts, urls, stop };
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The whole trail as one member's store holds it, newest first, page by page. */
async function trailOf(url: string): Promise<Record[]> {
  const records: Record[] = [];
  let before: string | null | undefined;
  do {
    const page = await call(url, 'GET', `/v1/admin/audit?limit=7${before ? `&before=${before}` : ''}`);
    if (page.status !== 200) throw new Error(`GET /v1/admin/audit answered ${page.status}: ${JSON.stringify(page.body)}`);
    records.push(...page.body.records);
    before = page.body.next;
  } while (before);
  return records;
}

const one = (records: Record[], kind: string, subject: string) => {
  const found = records.filter((r) => r.kind === kind && r.subject === subject);
  if (found.length !== 1) throw new Error(`expected one ${kind} of ${subject}, found ${found.length}`);
  return found[0];
};

test('a transfer, a drain, an operator and an automatic failover (and the fences that ended the lost owners) leave their records, with actor and cause, on every member, and after a leader change', async (t) => {
  const { hosts, urls, stop } = await startCluster(t);
  const any = urls[0];
  await eventually(async () => (await call(any, 'GET', '/v1/admin/nodes')).body?.nodes?.length === 3, 'three nodes registered');

  // A transfer an operator asked for.
  t.is((await call(any, 'POST', '/v1/admin/streams', { stream: 'orders', node: 'n1' })).status, 201);
  t.is((await call(any, 'POST', '/v1/admin/transfers', { stream: 'orders', target: 'n2' })).status, 202);
  await eventually(async () => (await call(any, 'GET', '/v1/admin/transfers/orders')).body?.owner === 'n2', 'the handoff of orders');
  // A drain: its transfers start on their own.
  for (const stream of ['a1', 'a2']) t.is((await call(any, 'POST', '/v1/admin/streams', { stream, node: 'n3' })).status, 201);
  t.is((await call(any, 'POST', '/v1/admin/nodes/n3/drain')).status, 202);
  await eventually(async () => (await call(any, 'GET', '/v1/admin/nodes/n3')).body?.remaining === 0, 'n3 drained');
  // An operator's failover of a node that is not Dead (forced).
  t.is((await call(any, 'POST', '/v1/admin/nodes/n2/failover', { force: true })).status, 202);

  const expectTrail = (records: Record[]) => {
    const proposed = one(records, 'transfer_proposed', 'orders');
    const completed = one(records, 'transfer_completed', 'orders');
    const drain = one(records, 'node_drain', 'n3');
    const failover = one(records, 'node_failover', 'n2');
    const failedOver = one(records, 'stream_failed_over', 'orders');
    t.like(proposed, { actor: 'olivia', from: 'n1', to: 'n2', epoch_before: 1 });
    t.like(completed, { actor: 'system:handoff', cause: proposed.id, epoch_before: 1, epoch_after: 2 });
    t.like(drain, { actor: 'olivia' });
    for (const stream of ['a1', 'a2']) {
      t.like(one(records, 'transfer_proposed', stream), { actor: 'system:drain', cause: drain.id, from: 'n3' });
      t.like(one(records, 'transfer_completed', stream), { cause: drain.id });
    }
    t.like(failover, { actor: 'olivia' });
    t.regex(failover.evidence ?? '', /n2 was (Alive|Suspect)/);
    t.like(failedOver, { actor: 'olivia', cause: failover.id, from: 'n2', epoch_before: 2, epoch_after: 3 });
    // The new owner fenced n2 in the object store before serving: that is on the trail too.
    t.like(one(records, 'zombie_fenced', 'orders'), { actor: 'system:takeover', cause: failover.id, from: 'n2', to: failedOver.to, epoch_after: 3 });
    t.true(records.every((r) => typeof r.time === 'number' && r.time > 0), 'every record carries the proposer\'s time');
    const verdict = verifyTrail([...records].reverse() as never);
    t.true(verdict.ok, JSON.stringify(verdict));
  };
  const expected = ['transfer_proposed', 'node_drain', 'node_failover', 'stream_failed_over', 'zombie_fenced'];
  const complete = (records: Record[]) => expected.every((kind) => records.some((r) => r.kind === kind)) && records.filter((r) => r.kind === 'transfer_completed').length === 3;
  for (const url of urls) await eventually(async () => complete(await trailOf(url)), `the whole trail in the store of ${url}`);
  for (const url of urls) expectTrail(await trailOf(url));

  // The leader goes; the others keep their copies, and the next change is recorded by the new leader.
  const leader = hosts.findIndex((host) => host.get(METADATA_CONSENSUS).leadership().isLeader);
  t.true(leader >= 0, 'a leader');
  // The drain ends (so every node takes streams again), and the leader owns a stream when it
  // goes, so its automatic failover has something to move.
  t.is((await call(any, 'POST', '/v1/admin/nodes/n3/undrain')).status, 200);
  t.is((await call(any, 'POST', '/v1/admin/streams', { stream: 'on-leader', node: IDS[leader] })).status, 201);
  await stop(leader);
  const remaining = urls.filter((_, i) => i !== leader);
  for (const url of remaining) expectTrail(await trailOf(url));
  await eventually(async () => (await call(remaining[0], 'POST', '/v1/admin/streams', { stream: 'after', node: IDS.find((id, i) => i !== leader) })).status === 201, 'a create through the new leader');
  for (const url of remaining) {
    await eventually(async () => (await trailOf(url)).some((r) => r.kind === 'stream_created' && r.subject === 'after'), `the create in the store of ${url}`);
    t.like(one(await trailOf(url), 'stream_created', 'after'), { actor: 'olivia' });
    t.like(one(await trailOf(url), 'node_undrain', 'n3'), { actor: 'olivia', cause: one(await trailOf(url), 'node_drain', 'n3').id });
  }
  // The stopped leader goes silent: the new leader's liveness verdicts are on the trail, with
  // their evidence, and a Dead node that owned streams is failed over automatically.
  const lost = IDS[leader];
  await eventually(
    async () => (await trailOf(remaining[0])).some((r) => r.kind === 'node_liveness' && r.subject === lost && r.to === null && /-> Dead$/.test((r as unknown as { reason: string }).reason)),
    `${lost} judged Dead on the trail`,
  );
  const verdict = (await trailOf(remaining[0])).find((r) => r.kind === 'node_liveness' && r.subject === lost)!;
  t.like(verdict, { actor: 'system:liveness' });
  t.regex(verdict.evidence ?? '', /Dead after \d+ ms/);
  await eventually(
    async () => (await trailOf(remaining[0])).some((r) => r.kind === 'stream_failed_over' && r.subject === 'on-leader'),
    `the automatic failover of ${lost} and the stream it moved`,
  );
  const automatic = (await trailOf(remaining[0])).find((r) => r.kind === 'node_failover' && r.subject === lost)!;
  t.like(automatic, { actor: 'system:liveness' });
  t.regex(automatic.evidence ?? '', /Dead after \d+ ms/);
  t.like(one(await trailOf(remaining[0]), 'stream_failed_over', 'on-leader'), { cause: automatic.id, from: lost, actor: 'system:liveness' });

  // Filters read the same store: by subject, by kind, and an unknown kind is refused.
  const orders = await call(remaining[0], 'GET', '/v1/admin/audit?subject=orders');
  // Its oldest five (the automatic failover may have moved it once more since).
  t.deepEqual(
    orders.body.records.map((r: Record) => r.kind).slice(-5),
    ['zombie_fenced', 'stream_failed_over', 'transfer_completed', 'transfer_proposed', 'stream_created'],
  );
  const drains = await call(remaining[0], 'GET', '/v1/admin/audit?kind=node_drain');
  t.deepEqual(drains.body.records.map((r: Record) => r.subject), ['n3']);
  t.is((await call(remaining[0], 'GET', '/v1/admin/audit?kind=node_exploded')).status, 400);
  t.is((await call(remaining[0], 'GET', '/v1/admin/audit?subject=nobody')).status, 400);
  t.deepEqual((await call(remaining[0], 'GET', '/v1/admin/audit?before=0-0')).body, { trail: 'streams', records: [], next: null }, 'a page past the end is empty');
});
