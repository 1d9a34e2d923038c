import { PeerAuthenticator, peerSecretDigest } from '@baton/http/internal/peer-auth.js';
import { peerHeaders, testPeerAuthenticator, testPeerSecret } from '../../support/peer-auth.js';
import test from 'ava';
import { makeTempDir, type TempDir } from '@baton/testing/internal/temp-dir.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { HttpPeerTransport, RAFT_HTTP_BASE } from '@baton/plugin-raft/internal/transport-http.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundPeerStream } from '@baton/plugin-raft/internal/peer-stream-out.js';
import { MAX_COMMAND_DEPTH, PROPOSE_CHANNEL } from '@baton/plugin-raft/internal/driver/wire.js';
import { NotAppendedError } from '@baton/contracts';
import type { KvCommand } from '@baton/conformance/internal/kv-state-machine.js';
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
    const first = await follower.propose(
      { op: 'put', key: 'a', value: '1' },
      { idempotencyKey: 'http-op' },
    );
    await follower.propose({ op: 'put', key: 'b', value: '2' });
    const view = await follower.read();
    t.is(view.state.data.a, '1');
    t.is(view.state.data.b, '2');

    // Every process goes away; new ones start on the same files.
    await c.stopAll();
    for (const id of c.ids) await c.start(id);
    await c.until(() => c.leader() !== undefined, 10_000, 'a leader after restart');
    const again = c.members.get('h2')!.raft;
    const replay = await again.propose(
      { op: 'put', key: 'a', value: '1' },
      { idempotencyKey: 'http-op' },
    );
    t.true(replay.replayed);
    t.deepEqual(replay.position, first.position);
    const after = await again.read();
    t.is(after.state.data.b, '2');
    t.true(after.applied.index >= first.position.index);
  });
});

test('a proposal forwarded to a leader whose process is gone (its port refuses connections) is not lost as "outcome unknown": it waits for the next leader and commits there', async (t) => {
  await withCluster(async (c) => {
    for (const id of c.ids) await c.start(id);
    await c.until(() => c.leader() !== undefined, 10_000, 'a leader');
    const old = c.leader()!;
    const oldId = old.leadership().self;
    const follower = [...c.members.values()].map((m) => m.raft).find((r) => r !== old)!;
    await c.until(() => follower.leadership().leader === oldId, 10_000, 'the follower to know the leader');
    // Nothing listens at the leader's port any more, and the follower still takes it for the
    // leader when the proposal leaves (no tick ran in between).
    const { server } = c.servers.get(oldId)!;
    server.close();
    server.closeAllConnections();
    t.is(follower.leadership().leader, oldId);
    const proposal = follower.propose({ op: 'put', key: 'after-loss', value: '1' }, { idempotencyKey: 'after-loss' });
    await c.stop(oldId);
    const receipt = await proposal;
    t.false(receipt.replayed);
    t.not(follower.leadership().leader, oldId, 'a new leader took it');
    t.is((await follower.read()).state.data['after-loss'], '1');
  });
});

test('HTTP peers: a command as deep as the log takes reaches every member, on a stream frame and alone in a large message; a deeper one, proposed or forwarded, is refused before it is appended, and later writes commit', async (t) => {
  await withCluster(async (c) => {
    for (const id of c.ids) await c.start(id);
    await c.until(() => c.leader() !== undefined, 10_000, 'a leader');
    const leader = c.leader()!;
    const leaderId = leader.leadership().self;
    const followerId = c.ids.find((id) => id !== leaderId)!;
    const follower = c.members.get(followerId)!;
    await c.until(() => follower.raft.leadership().leader === leaderId, 10_000, 'the follower to know the leader');
    /** A put `depth` levels deep: the command object and `depth - 1` levels of nesting under it. */
    const deepPut = (key: string, depth: number, value = 'v') => {
      let nest: unknown = {};
      for (let level = 2; level < depth; level++) nest = { n: nest };
      return { op: 'put', key, value, nest } as KvCommand;
    };
    const everyMemberHas = (key: string, value: string) =>
      c.until(() => [...c.members.values()].every((m) => m.raft.view().state.data[key] === value), 20_000, `every member to apply ${key}`);
    // Forwarded by a follower, then appended: on the followers' stream frames.
    await follower.raft.propose(deepPut('deepest', MAX_COMMAND_DEPTH));
    await everyMemberHas('deepest', 'v');
    // An append over the frame bound (4 MiB) travels alone on /messages, two levels deeper still.
    const large = 'x'.repeat(5 * 1024 * 1024);
    await leader.propose(deepPut('deepest-large', MAX_COMMAND_DEPTH, large));
    await everyMemberHas('deepest-large', large);
    // One level deeper could not reach a follower: appended, it would hold back every later entry.
    const tooDeep = deepPut('too-deep', MAX_COMMAND_DEPTH + 1);
    const refusal = await t.throwsAsync(leader.propose(tooDeep), { instanceOf: NotAppendedError });
    t.is(refusal?.reason, 'invalid_command');
    // A member that forwards it anyway (its own check skipped) is refused by the leader.
    const forwarded = await follower.transport.request(
      leaderId,
      { channel: PROPOSE_CHANNEL, body: { kind: 'command', cluster: c.cluster, command: tooDeep, timeoutMs: 5_000 } },
      { timeoutMs: 10_000 },
    );
    t.like(forwarded.body as Record<string, unknown>, { ok: false, kind: 'not_appended', reason: 'invalid_command' });
    await follower.raft.propose({ op: 'put', key: 'after', value: 'ok' });
    await everyMemberHas('after', 'ok');
    t.false(Object.hasOwn(leader.view().state.data, 'too-deep'));
  });
});

test('HTTP peers: malformed, foreign and unknown-sender traffic is refused and counted; the member keeps working', async (t) => {
  await withCluster(async (c) => {
    for (const id of c.ids) await c.start(id);
    await c.until(() => c.leader() !== undefined, 10_000, 'a leader');
    const target = c.members.get('h1')!;
    const url = `${c.servers.get('h1')!.url}${RAFT_HTTP_BASE}/messages`;
    const post = (body: string, credential: Record<string, string> = peerHeaders('h2')) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...credential }, body });
    const fine = JSON.stringify({ cluster: 'http-test', from: 'h2', messages: [] });
    t.is((await post(fine, {})).status, 401);
    t.is((await post(fine, peerHeaders('h2', 'a guessed secret, long enough to pass'))).status, 401);
    t.is((await post(fine, peerHeaders('stranger'))).status, 401);
    t.is(target.transport.stats.rejectedUnauthenticated, 3);
    t.is((await post('{not json')).status, 400);
    t.is(
      (await post(JSON.stringify({ cluster: 'http-test', from: 'h2', messages: 'nope' }))).status,
      400,
    );
    t.is(
      (await post(JSON.stringify({ cluster: 'elsewhere', from: 'h2', messages: [] }))).status,
      403,
    );
    t.is(
      (await post(JSON.stringify({ cluster: 'http-test', from: 'stranger', messages: [] }))).status,
      403,
    );
    // Well-formed envelope, garbage Raft body: accepted by HTTP, dropped by Raft's validation.
    t.is(
      (
        await post(
          JSON.stringify({
            cluster: 'http-test',
            from: 'h2',
            messages: [{ channel: 'raft', body: { x: 1 } }],
          }),
        )
      ).status,
      204,
    );
    t.is(target.transport.stats.rejectedMalformed, 2);
    t.is(target.transport.stats.rejectedForeign, 2);
    await c.until(
      () => target.raft.stats.malformedMessages >= 1,
      2_000,
      'raft to count the bad body',
    );
    const r = await target.raft.propose({ op: 'put', key: 'still', value: 'ok' });
    t.false(r.replayed);
  });
});

test('HTTP peers: a body over the size limit is refused with 413 before it is parsed', async (t) => {
  const server = await listen();
  try {
    const transport = new HttpPeerTransport({
      self: 'a',
      peers: { b: 'http://127.0.0.1:9' },
      cluster: 'c',
      clock: new SystemClock(),
      logger: new MemoryLogger(),
      auth: testPeerAuthenticator('a', ['a', 'b']),
      maxMessageBytes: 100,
      maxLargeMessageBytes: 100,
    });
    let delivered = 0;
    transport.listen('raft', { onMessage: () => delivered++ });
    server.mount(transport.router());
    const body = JSON.stringify({
      cluster: 'c',
      from: 'b',
      messages: [{ channel: 'raft', body: 'x'.repeat(500) }],
    });
    const res = await fetch(`${server.url}${RAFT_HTTP_BASE}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...peerHeaders('b') },
      body,
    });
    t.is(res.status, 413);
    t.is(res.headers.get('content-type'), 'application/problem+json');
    t.is(delivered, 0);
    t.is(transport.stats.rejectedTooLarge, 1);
    const small = JSON.stringify({
      cluster: 'c',
      from: 'b',
      messages: [{ channel: 'raft', body: 1 }],
    });
    t.is(
      (await fetch(`${server.url}${RAFT_HTTP_BASE}/messages`, { method: 'POST', body: small, headers: peerHeaders('b') }))
        .status,
      204,
    );
    t.is(delivered, 1);
  } finally {
    server.server.closeAllConnections();
    await new Promise((resolve) => server.server.close(resolve));
  }
});

/** Two transports, each on its own loopback server: `a` sends to `b`; `b` records what arrives on channel "t". */
async function pair(
  options: {
    /** b knows a by another secret's digest: a's credential is refused. */
    bDistrustsA?: boolean;
    streamMaxAgeMs?: number;
    maxMessageBytes?: number;
  } = {},
) {
  const sa = await listen();
  const sb = await listen();
  const clock = new SystemClock();
  const a = new HttpPeerTransport({
    self: 'a',
    peers: { b: sb.url },
    cluster: 'c',
    clock,
    logger: new MemoryLogger(),
    auth: testPeerAuthenticator('a', ['a', 'b']),
    streamMaxAgeMs: options.streamMaxAgeMs,
  });
  const b = new HttpPeerTransport({
    self: 'b',
    peers: { a: sa.url },
    cluster: 'c',
    clock,
    logger: new MemoryLogger(),
    auth: options.bDistrustsA
      ? PeerAuthenticator.secure('b', testPeerSecret('b'), { a: peerSecretDigest('another secret of a, not the one it presents') })
      : testPeerAuthenticator('b', ['a', 'b']),
    maxMessageBytes: options.maxMessageBytes,
  });
  const got: unknown[] = [];
  b.listen('t', { onMessage: (from, m) => got.push(from === 'a' ? m.body : `from ${from}`) });
  sa.mount(a.router());
  sb.mount(b.router());
  const sockets = new Set<unknown>();
  sb.server.on('connection', (s) => sockets.add(s));
  const until = async (cond: () => boolean, what: string) => {
    const end = clock.now() + 10_000;
    while (!cond()) {
      if (clock.now() > end) throw new Error(`${what} did not happen within 10 s`);
      await clock.sleep(2);
    }
  };
  const close = async () => {
    await a.stop();
    await b.stop();
    for (const s of [sa, sb]) {
      s.server.closeAllConnections();
      await new Promise((resolve) => s.server.close(resolve));
    }
  };
  return { a, b, sa, sb, got, sockets, until, close };
}

/** Opens a stream by hand, as a peer (or a stranger) would, and returns the answer's status. */
async function rawStream(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  const res = await fetch(`${url}${RAFT_HTTP_BASE}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', ...headers },
    body,
  });
  return res.status;
}

test('HTTP peers: one-way messages travel in send order on one connection, bursts and single messages alike', async (t) => {
  const p = await pair();
  try {
    const sent: number[] = [];
    for (let i = 0; i < 300; i++) {
      p.a.send('b', { channel: 't', body: i });
      sent.push(i);
      // Some in one turn of the event loop (one write), some alone.
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await p.until(() => p.got.length === sent.length, 'all 300 messages');
    t.deepEqual(p.got, sent);
    t.is(p.sockets.size, 1);
    t.is(p.a.stats.sent, 300);
    t.is(p.b.stats.received, 300);
  } finally {
    await p.close();
  }
});

test('HTTP peers: a stream replaced for its age loses nothing and keeps the order across the switch', async (t) => {
  const p = await pair({ streamMaxAgeMs: 0 });
  try {
    for (let i = 0; i < 100; i++) {
      p.a.send('b', { channel: 't', body: i });
      if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await p.until(() => p.got.length === 100, 'all 100 messages');
    t.deepEqual(
      p.got,
      Array.from({ length: 100 }, (_, i) => i),
    );
    t.is(p.a.stats.sendFailures, 0);
  } finally {
    await p.close();
  }
});

test('HTTP peers: a malformed frame in a stream is counted and skipped; the frames after it arrive', async (t) => {
  const p = await pair();
  try {
    const frames = [
      '{"channel":"t","body":1}',
      '{not json',
      '{"channel":"t"}',
      '{"channel":"","body":2}',
      '{"channel":"t","body":3}',
      '',
    ].join('\n');
    t.is(await rawStream(p.sb.url, { 'x-baton-cluster': 'c', 'x-baton-from': 'a', ...peerHeaders('a') }, frames), 204);
    t.deepEqual(p.got, [1, 3]);
    t.is(p.b.stats.rejectedMalformed, 3);
  } finally {
    await p.close();
  }
});

test('HTTP peers: a stream from another cluster, speaking for another member, without names or without a valid credential is refused and counted', async (t) => {
  const p = await pair();
  try {
    const frame = '{"channel":"t","body":1}\n';
    const ok = { 'x-baton-cluster': 'c', 'x-baton-from': 'a', ...peerHeaders('a') };
    t.is(await rawStream(p.sb.url, { ...ok, 'x-baton-cluster': 'elsewhere' }, frame), 403);
    t.is(await rawStream(p.sb.url, { ...ok, 'x-baton-from': 'stranger' }, frame), 403);
    t.is(await rawStream(p.sb.url, { ...ok, 'x-baton-from': 'b' }, frame), 403);
    t.is(await rawStream(p.sb.url, { ...ok, 'x-baton-peer-secret': 'a guessed secret, long enough to pass' }, frame), 401);
    t.is(await rawStream(p.sb.url, { 'x-baton-cluster': 'c', 'x-baton-from': 'a' }, frame), 401);
    t.is(await rawStream(p.sb.url, { ...peerHeaders('a') }, frame), 400);
    t.deepEqual(p.got, []);
    t.is(p.b.stats.rejectedForeign, 3);
    t.is(p.b.stats.rejectedUnauthenticated, 2);
    t.is(p.b.stats.rejectedMalformed, 1);
    t.is(await rawStream(p.sb.url, ok, frame), 204);
    t.deepEqual(p.got, [1]);
  } finally {
    await p.close();
  }
});

test('HTTP peers: a frame over the size limit ends the stream with 413 before it is buffered whole', async (t) => {
  const p = await pair({ maxMessageBytes: 100 });
  try {
    const frames = `{"channel":"t","body":1}\n{"channel":"t","body":"${'x'.repeat(500)}"}\n{"channel":"t","body":3}\n`;
    t.is(await rawStream(p.sb.url, { 'x-baton-cluster': 'c', 'x-baton-from': 'a', ...peerHeaders('a') }, frames), 413);
    t.deepEqual(p.got, [1]);
    t.is(p.b.stats.rejectedTooLarge, 1);
  } finally {
    await p.close();
  }
});

test('HTTP peers: a sender whose peer refuses its streams counts the failures and delivers nothing', async (t) => {
  const p = await pair({ bDistrustsA: true });
  try {
    p.a.send('b', { channel: 't', body: 1 });
    await p.until(() => p.a.stats.sendFailures >= 1, 'the refusal');
    t.deepEqual(p.got, []);
    t.true(p.b.stats.rejectedUnauthenticated >= 1);
  } finally {
    await p.close();
  }
});

test('HTTP peers: messages flow again once a peer that was down comes back', async (t) => {
  const p = await pair();
  try {
    p.a.send('b', { channel: 't', body: 'before' });
    await p.until(() => p.got.length === 1, 'the first message');
    // b's member stops (its routes answer 503) and its open streams end.
    p.sb.mount(undefined);
    await p.b.stop();
    const b2 = new HttpPeerTransport({
      self: 'b',
      peers: { a: p.sa.url },
      cluster: 'c',
      clock: new SystemClock(),
      logger: new MemoryLogger(),
      auth: testPeerAuthenticator('b', ['a', 'b']),
    });
    b2.listen('t', { onMessage: (_from, m) => p.got.push(m.body) });
    p.a.send('b', { channel: 't', body: 'while down' });
    await p.until(() => p.a.stats.sendFailures >= 1, 'the failed stream');
    p.sb.mount(b2.router());
    // Raft resends until it gets through; so does this loop.
    await p.until(() => {
      p.a.send('b', { channel: 't', body: 'after' });
      return p.got.includes('after');
    }, 'a message after the restart');
    t.is(p.got[0], 'before');
    t.false(p.got.includes('while down'));
    await b2.stop();
  } finally {
    await p.close();
  }
});

test('HTTP peers: a server that stops is not held open by the streams peers keep to it', async (t) => {
  const p = await pair();
  try {
    p.a.send('b', { channel: 't', body: 1 });
    await p.until(() => p.got.length === 1, 'the message');
    // Without ending the stream itself, close() would wait for the peer's never-ending request.
    await new Promise<void>((resolve) => p.sb.server.close(() => resolve()));
    t.false(p.sb.server.listening);
    t.is(p.got.length, 1);
  } finally {
    await p.close();
  }
});

test('HTTP peers: a message whose body is not JSON is dropped and counted, never thrown; the next one arrives', async (t) => {
  const p = await pair();
  try {
    t.notThrows(() => p.a.send('b', { channel: 't', body: { n: 1n } }));
    p.a.send('b', { channel: 't', body: 2 });
    await p.until(() => p.got.length === 1, 'the next message');
    t.deepEqual(p.got, [2]);
    t.is(p.a.stats.sendFailures, 1);
  } finally {
    await p.close();
  }
});

test('HTTP peers: a replaced stream whose receiver never answers its end is cut; the frames after it go on a new stream', async (t) => {
  const requests: string[] = [];
  // Reads every stream, answers none.
  const server = createServer((req) => {
    const at = requests.push('') - 1;
    req.on('data', (chunk: Buffer) => (requests[at] += chunk.toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const clock = new SystemClock();
  const failures: Error[] = [];
  const stream = new OutboundPeerStream({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`,
    headers: {},
    clock,
    maxPendingFrames: 100,
    maxBufferedBytes: 1_000_000,
    maxAgeMs: 0,
    retryMs: 10,
    drainTimeoutMs: 50,
    onFailure: (error) => failures.push(error),
  });
  const until = async (cond: () => boolean, what: string) => {
    const end = clock.now() + 10_000;
    while (!cond()) {
      if (clock.now() > end) throw new Error(`${what} did not happen within 10 s`);
      await clock.sleep(2);
    }
  };
  try {
    t.is(stream.push('"one"'), undefined);
    await until(() => requests[0] === '"one"\n', 'the first frame');
    // Past its age: the first stream is ended, and "two" waits for its answer, which never comes.
    t.is(stream.push('"two"'), undefined);
    await until(() => requests[1] === '"two"\n', 'the second frame on a new stream');
    t.is(requests[0], '"one"\n');
    t.is(failures.length, 1);
    t.regex(failures[0].message, /no answer to the end of a stream/);
  } finally {
    void stream.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('HTTP peers: names of Object.prototype members are no peers unless configured', async (t) => {
  const transport = new HttpPeerTransport({
    self: 'a',
    peers: { b: 'http://127.0.0.1:9' },
    cluster: 'c',
    clock: new SystemClock(),
    logger: new MemoryLogger(),
    auth: testPeerAuthenticator('a', ['a', 'b']),
  });
  try {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      transport.send(name, { channel: 't', body: 1 });
      await t.throwsAsync(transport.request(name, { channel: 't', body: 1 }, { timeoutMs: 1_000 }), { message: /not a configured peer/ });
    }
    t.is(transport.stats.sent, 0);
    t.is(transport.stats.sendFailures, 0);
  } finally {
    await transport.stop();
  }
});
