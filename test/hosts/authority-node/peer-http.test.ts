import { peerHeaders } from '../../support/peer-auth.js';
import { createServer, type Server } from 'node:net';
import test from 'ava';
import { FeedReplicator } from '@baton/authority-transfer/internal/feed-replicator.js';
import { HttpFrontierProbe } from '@baton/authority-transfer/internal/http-frontier-probe.js';
import { MemberTracker } from '@baton/authority-transfer/internal/member-tracker.js';
import { FeedReplicas } from '@baton/authority-transfer/internal/feed-replicas.js';
import { Roster } from '@baton/authority-transfer/internal/roster.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/server-process.js';
import { ADMIN, startNode, transfer } from './node-harness.js';

const clock = new SystemClock();
const EAST = { member: 'east-1', incarnation: 'inc-east' };
const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ serial: i + 1, authority: 'a', operation: `op${i}`, epoch: 1 }));

/** A TCP server that accepts connections and never answers: an unresponsive target. */
async function silentServer(): Promise<{ url: string; server: Server }> {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, server };
}

test('the HTTP probe reads the target applied serial through the roster address', async (t) => {
  const west = await startNode({ mode: 'dc', self: 'west-1' });
  try {
    await west.node.replicas.reset('east-1', EAST.incarnation);
    await west.node.replicas.apply('east-1', EAST.incarnation, entries(7));
    const roster = new Roster({ west: { members: { 'west-1': { public: west.publicUrl } } } });
    const probe = new HttpFrontierProbe(roster, clock, { headers: peerHeaders('east-1') });
    // A bound, not a wait: a healthy member answers at once; a loaded machine may take seconds.
    const reading = await probe.probe('west', EAST, { signal: new AbortController().signal, timeoutMs: 15_000 });
    t.is(reading?.serial, 7);
    const other = await probe.probe('west', { member: 'east-1', incarnation: 'inc-east-after-disk-loss' }, { signal: new AbortController().signal, timeoutMs: 15_000 });
    t.is(other?.serial, 0, 'a serial of another incarnation of the origin feed counts for nothing');
    const storage = west.node.replicas.applied('east-1').storage;
    t.truthy(storage);
    t.is(reading?.replica, `west-1=${storage}`, 'the reading names the replica storage it was read from');
    await west.node.replicas.reset('east-1', EAST.incarnation);
    const afterReset = await probe.probe('west', EAST, { signal: new AbortController().signal, timeoutMs: 15_000 });
    t.is(afterReset?.serial, 0);
    t.not(afterReset?.replica, reading?.replica, 'a reset replica answers under a new storage id');
  } finally {
    await west.host.stop();
  }
});

test('an unreachable, unknown or unauthorised target reads as no frontier', async (t) => {
  const west = await startNode({ mode: 'dc', self: 'west-1' });
  try {
    const roster = new Roster({
      west: { members: { 'west-1': { public: west.publicUrl } } },
      down: { members: { 'down-1': { public: 'http://127.0.0.1:9' } } },
    });
    const signal = new AbortController().signal;
    t.is(await new HttpFrontierProbe(roster, clock, { headers: peerHeaders('east-1') }).probe('down', EAST, { signal, timeoutMs: 2_000 }), undefined);
    t.is(await new HttpFrontierProbe(roster, clock, { headers: peerHeaders('east-1') }).probe('nowhere', EAST, { signal, timeoutMs: 2_000 }), undefined);
    t.is(await new HttpFrontierProbe(roster, clock).probe('west', EAST, { signal, timeoutMs: 2_000 }), undefined, 'no peer credential: 401');
  } finally {
    await west.host.stop();
  }
});

test('a probe of an unresponsive target gives up at its timeout, and an abort ends it at once', async (t) => {
  const silent = await silentServer();
  try {
    const roster = new Roster({ west: { members: { 'west-1': { public: silent.url } } } });
    const probe = new HttpFrontierProbe(roster, clock, { headers: peerHeaders('east-1') });
    t.is(await probe.probe('west', EAST, { signal: new AbortController().signal, timeoutMs: 100 }), undefined);
    const controller = new AbortController();
    const pending = probe.probe('west', EAST, { signal: controller.signal, timeoutMs: 60_000 });
    controller.abort(new Error('cancelled'));
    await t.throwsAsync(pending, { message: 'cancelled' });
  } finally {
    silent.server.close();
  }
});

test('the feed replicator pulls a peer feed, records its applied serial and hears the peer', async (t) => {
  const west = await startNode({ mode: 'dc', self: 'west-1' });
  try {
    for (let i = 0; i < 3; i++) await west.node.feed.append({ authority: 'a', operation: `op${i}`, epoch: 1 });
    const roster = new Roster({
      east: { members: { 'east-1': { public: 'http://127.0.0.1:9' } } },
      west: { members: { 'west-1': { public: west.publicUrl } } },
    });
    const replicas = new FeedReplicas('east-1');
    await replicas.open(['west-1']);
    const tracker = new MemberTracker(clock, roster, 'east-1');
    const replicator = new FeedReplicator('east-1', replicas, roster, tracker, clock, createSilentLogger(), {
      intervalMs: 1_000,
      timeoutMs: 15_000,
      batch: 2,
      headers: peerHeaders('east-1'),
    });
    await replicator.pullOnce();
    t.like(replicas.applied('west-1'), { incarnation: west.node.feed.incarnation, serial: 2 }, 'one batch');
    await replicator.pullOnce();
    t.is(replicas.applied('west-1').serial, 3);
    t.like(tracker.snapshot().find((m) => m.member === 'west-1'), { state: 'Alive' });
  } finally {
    await west.host.stop();
  }
});

test('two nodes over HTTP: the transfer commits once the target pulled the source feed through the barrier', async (t) => {
  const [eastPublic, westPublic] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const roster = {
    east: { members: { 'east-1': { public: `http://127.0.0.1:${eastPublic}` } } },
    west: { members: { 'west-1': { public: `http://127.0.0.1:${westPublic}` } } },
  };
  const east = await startNode({ self: 'east-1', roster, httpProbe: true, publicPort: eastPublic });
  const west = await startNode({ mode: 'dc', self: 'west-1', roster, publicPort: westPublic, feedPullMs: 20 });
  try {
    await east.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    for (let i = 1; i <= 3; i++) {
      const w = await east.call('POST', '/availability/v1/authorities/proj/writes', {
        base: east.publicUrl,
        token: 'writer-token',
        body: { operation: `op${i}`, epoch: 1 },
      });
      t.is(w.status, 200);
    }
    const res = await east.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'e2e', body: transfer });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.body.barrier, 3);
    t.true(west.node.replicas.appliedSerial(east.node.feed.origin()) >= 3, 'the target had applied the barrier when it committed');
  } finally {
    await west.host.stop();
    await east.host.stop();
  }
});
