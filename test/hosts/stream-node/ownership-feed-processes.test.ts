import { readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import test from 'ava';
import { watchStreamOwnership, type OwnershipWatch, type StreamOwnership } from '@baton/client/internal/ownership-watch.js';
import { StreamClient } from '@baton/client';
import { eventually } from '../eventually.js';
import { streamClusterForTest } from '../../nemesis/stream/cluster-for-test.js';

// The ownership feed on real stream node processes as `baton up` runs them (three Raft voters,
// WAL and Raft log on files, one fs object store): a transfer and a failover seen by a watcher,
// and one node holding ten thousand idle watchers.

/** Generous: a loaded machine takes seconds to elect, renew and move streams. */
const DEADLINE_MS = 90_000;
/**
 * How long after the metadata changed a watcher may wait for the event. The feed is pushed
 * from the watched node's apply, so this is a deadline on a condition, not a measurement;
 * the latency itself is measured in bench/ (stream-transfer/ownership-feed.js).
 */
const EVENT_DEADLINE_MS = 5_000;
const WATCHERS = 10_000;

/** Waits for an event the watcher has seen (the latest, or one still to come) that satisfies `condition`. */
async function seen(watch: OwnershipWatch<StreamOwnership>, events: StreamOwnership[], condition: (e: StreamOwnership) => boolean, what: string, ms: number) {
  await eventually(() => events.some(condition), what, ms);
  return events.find(condition)!;
}

test.serial('a watcher sees a transfer (pending target, then the new owner and epoch) and a killed owner\'s failover, from another node', async (t) => {
  t.timeout(4 * DEADLINE_MS);
  const c = await streamClusterForTest(t, { name: 'ownership-feed', seed: 71_301 });
  const leader = await c.leader();
  const ids = c.members.map((m) => m.id);
  const [victim, other] = ids.filter((id) => id !== leader);
  const ops = new StreamClient({ nodes: [c.urls[leader!]!], token: c.token });
  await ops.createStream('moved', other);
  await ops.createStream('lost', victim);

  // Watched at the leader, which owns neither stream.
  const watcherOf = (stream: string) => {
    const events: StreamOwnership[] = [];
    const watch = watchStreamOwnership(stream, { nodes: [c.urls[leader!]!], token: c.token });
    watch.onEvent((e) => events.push(e));
    t.teardown(() => watch.close());
    return { watch, events };
  };
  const moved = watcherOf('moved');
  const lost = watcherOf('lost');
  t.like(await seen(moved.watch, moved.events, () => true, 'the first event', DEADLINE_MS), { owner: other, epoch: 1, pending_target: null });
  t.like(await seen(lost.watch, lost.events, () => true, 'the first event', DEADLINE_MS), { owner: victim, epoch: 1, pending_target: null });

  await ops.transfer('moved', leader!);
  const pending = await seen(moved.watch, moved.events, (e) => e.pending_target === leader, 'the pending target', EVENT_DEADLINE_MS);
  t.like(pending, { owner: other, epoch: 1, pending_target_address: c.urls[leader!] });
  await eventually(async () => (await ops.describe('moved')).owner === leader, 'the transfer to complete', DEADLINE_MS);
  const completed = await seen(moved.watch, moved.events, (e) => e.owner === leader, 'the new owner', EVENT_DEADLINE_MS);
  t.like(completed, { epoch: 2, address: c.urls[leader!], pending_target: null });

  await c.members.find((m) => m.id === victim)!.process.kill();
  await eventually(async () => (await ops.describe('lost')).owner !== victim, `automatic failover to move the stream off ${victim}`, DEADLINE_MS);
  const now = (await ops.describe('lost')) as { owner: string; epoch: number };
  const failedOver = await seen(lost.watch, lost.events, (e) => e.owner !== victim, 'the failover', EVENT_DEADLINE_MS);
  t.like(failedOver, { owner: now.owner, epoch: now.epoch });
  t.true(failedOver.epoch > 1);
});

/** The consensus term a node reports. */
async function termAt(origin: string, token: string): Promise<number> {
  const response = await fetch(`${origin}/v1/admin/cluster/member`, { headers: { authorization: `Bearer ${token}` } });
  const { term } = (await response.json()) as { term?: unknown };
  if (typeof term !== 'number') throw new Error(`${origin} reported no term`);
  return term;
}

/** VmRSS of a process, in bytes. */
async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

/** An idle feed watcher on a raw connection: counts whether its first event arrived. */
function rawWatcher(url: URL, stream: string, token: string): { socket: Socket; got: () => string } {
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    // Only the head and the first event matter; the rest (heartbeats) is not kept.
    if (text.length < 4_096) text += chunk;
  });
  socket.on('error', () => undefined);
  socket.write(`GET /v1/streams/${stream}/ownership HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
  return { socket, got: () => text };
}

test.serial('one node holds 10,000 idle watchers with its memory bounded, refuses one more with 503, and keeps serving and renewing its lease', async (t) => {
  t.timeout(6 * DEADLINE_MS);
  const c = await streamClusterForTest(t, { name: 'ownership-feed', seed: 71_302 });
  const leader = await c.leader();
  const node = c.members.find((m) => m.id !== leader)!;
  const url = new URL(c.urls[node.id]!);
  const ops = new StreamClient({ nodes: [url.origin], token: c.token });
  await ops.createStream('watched', node.id);
  const termBefore = await termAt(url.origin, c.token);
  const rssBefore = await rssOf(node.process.pid!);

  const watchers: ReturnType<typeof rawWatcher>[] = [];
  t.teardown(() => {
    for (const w of watchers) w.socket.destroy();
  });
  // In batches, so no batch waits behind the listen backlog or the per-address cap of unproven connections.
  for (let batch = 0; batch < WATCHERS / 500; batch++) {
    const opened = Array.from({ length: 500 }, () => rawWatcher(url, 'watched', c.token));
    watchers.push(...opened);
    await eventually(() => opened.every((w) => w.got().includes('event: ownership\n')), `batch ${batch} of watchers to get their first event`, DEADLINE_MS);
  }
  t.true(watchers.every((w) => /^HTTP\/1\.1 200 /.test(w.got())));

  const refused = await fetch(`${url.origin}/v1/streams/watched/ownership`, { headers: { authorization: `Bearer ${c.token}`, accept: 'text/event-stream' } });
  t.is(refused.status, 503, 'one watcher past the bound is refused');
  t.truthy(refused.headers.get('retry-after'));
  await refused.arrayBuffer();

  // Still serving: appends on its stream, admin reads; still Alive, with no election meanwhile.
  const appended = await ops.append('watched', ['after 10,000 watchers']);
  t.is(appended.node, node.id);
  t.is((await ops.node(node.id)).liveness, 'Alive');
  t.is(await termAt(url.origin, c.token), termBefore, 'no leader election while the watchers connected');
  const rssAfter = await rssOf(node.process.pid!);
  const perWatcher = (rssAfter - rssBefore) / WATCHERS;
  t.log(`RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${(rssAfter / 2 ** 20).toFixed(0)} MiB with ${WATCHERS} watchers (${(perWatcher / 1024).toFixed(1)} KiB each)`);
  // A socket, its parser and one subscription each: tens of KiB at most, never a buffer per watcher.
  t.true(rssAfter - rssBefore < 400 * 2 ** 20, 'ten thousand idle watchers cost under 400 MiB');

  // A transfer reaches every one of them.
  await ops.transfer('watched', leader!);
  await eventually(() => watchers.every((w) => w.got().includes(`"pending_target":"${leader}"`)), 'every watcher to see the pending target', DEADLINE_MS);
  t.pass();
});
