import test from 'ava';
import { makeTempDir, type TempDir } from '../../../framework/testing/temp-dir.js';
import { SystemClock } from '../../../framework/kernel/system-clock.js';
import { HttpPeerTransport, RAFT_HTTP_BASE } from '../../../plugins/raft/transport-http.js';
import { HttpCluster, listen } from './support/http-cluster.js';
import { MemoryLogger } from './support/silent-logger.js';

async function withCluster(run: (c: HttpCluster) => Promise<void>): Promise<void> {
  const ids = ['h1', 'h2', 'h3'];
  const dirs: TempDir[] = [];
  for (const _ of ids) dirs.push(await makeTempDir('raft-http'));
  const c = new HttpCluster(ids, Object.fromEntries(ids.map((id, i) => [id, dirs[i].path])));
  try {
    await c.listenAll();
    await run(c);
  } finally {
    await c.close();
    for (const d of dirs) await d.remove();
  }
}

test('three members over HTTP with file storage: replicate, read, then restart from disk and replay', async (t) => {
  await withCluster(async (c) => {
    for (const id of c.ids) await c.start(id);
    await c.until(() => c.leader() !== undefined, 10_000, 'a leader');
    const leader = c.leader()!;
    const follower = [...c.members.values()].map((m) => m.raft).find((r) => r !== leader)!;
    const first = await follower.propose({ op: 'put', key: 'a', value: '1' }, { idempotencyKey: 'http-op' });
    await follower.propose({ op: 'put', key: 'b', value: '2' });
    const view = await follower.read();
    t.is(view.state.data.a, '1');
    t.is(view.state.data.b, '2');

    // Every process goes away; new ones start on the same files.
    await c.stopAll();
    for (const id of c.ids) await c.start(id);
    await c.until(() => c.leader() !== undefined, 10_000, 'a leader after restart');
    const again = c.members.get('h2')!.raft;
    const replay = await again.propose({ op: 'put', key: 'a', value: '1' }, { idempotencyKey: 'http-op' });
    t.true(replay.replayed);
    t.deepEqual(replay.position, first.position);
    const after = await again.read();
    t.is(after.state.data.b, '2');
    t.true(after.applied.index >= first.position.index);
  });
});

test('HTTP peers: malformed, foreign and unknown-sender traffic is refused and counted; the member keeps working', async (t) => {
  await withCluster(async (c) => {
    for (const id of c.ids) await c.start(id);
    await c.until(() => c.leader() !== undefined, 10_000, 'a leader');
    const target = c.members.get('h1')!;
    const url = `${c.servers.get('h1')!.url}${RAFT_HTTP_BASE}/messages`;
    const post = (body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    t.is((await post('{not json')).status, 400);
    t.is((await post(JSON.stringify({ cluster: 'http-test', from: 'h2', messages: 'nope' }))).status, 400);
    t.is((await post(JSON.stringify({ cluster: 'elsewhere', from: 'h2', messages: [] }))).status, 403);
    t.is((await post(JSON.stringify({ cluster: 'http-test', from: 'stranger', messages: [] }))).status, 403);
    // Well-formed envelope, garbage Raft body: accepted by HTTP, dropped by Raft's validation.
    t.is((await post(JSON.stringify({ cluster: 'http-test', from: 'h2', messages: [{ channel: 'raft', body: { x: 1 } }] }))).status, 204);
    t.is(target.transport.stats.rejectedMalformed, 2);
    t.is(target.transport.stats.rejectedForeign, 2);
    await c.until(() => target.raft.stats.malformedMessages >= 1, 2_000, 'raft to count the bad body');
    const r = await target.raft.propose({ op: 'put', key: 'still', value: 'ok' });
    t.false(r.replayed);
  });
});

test('HTTP peers: a body over the size limit is refused with 413 before it is parsed', async (t) => {
  const server = await listen();
  try {
    const transport = new HttpPeerTransport({ self: 'a', peers: { b: 'http://127.0.0.1:9' }, cluster: 'c', clock: new SystemClock(), logger: new MemoryLogger(), maxBodyBytes: 100 });
    let delivered = 0;
    transport.listen('raft', { onMessage: () => delivered++ });
    server.mount(transport.router());
    const body = JSON.stringify({ cluster: 'c', from: 'b', messages: [{ channel: 'raft', body: 'x'.repeat(500) }] });
    const res = await fetch(`${server.url}${RAFT_HTTP_BASE}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    t.is(res.status, 413);
    t.is(delivered, 0);
    t.is(transport.stats.rejectedMalformed, 1);
    const small = JSON.stringify({ cluster: 'c', from: 'b', messages: [{ channel: 'raft', body: 1 }] });
    t.is((await fetch(`${server.url}${RAFT_HTTP_BASE}/messages`, { method: 'POST', body: small })).status, 204);
    t.is(delivered, 1);
  } finally {
    server.server.closeAllConnections();
    await new Promise((resolve) => server.server.close(resolve));
  }
});
