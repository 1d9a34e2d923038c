import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { verifyTrail } from '@baton/consensus';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { ADMIN, READER, WRITER, startNode, transfer, waitFor } from './node-harness.js';

type Node = Awaited<ReturnType<typeof startNode>>;

async function write(n: Node, operation: string, epoch = 1) {
  const res = await n.call('POST', '/availability/v1/authorities/proj/writes', { base: n.publicUrl, token: WRITER, body: { operation, epoch } });
  if (res.status !== 200) throw new Error(`write answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as { serial: number };
}

/** Two members: east (mode ha, probing over HTTP) and west (mode dc, pulling east's feed). */
async function twoMembers(
  t: { teardown(fn: () => Promise<void>): void },
  east: { dataDir?: string | null; consensus?: { use: string; options?: Record<string, unknown> } },
) {
  // Below the kernel's ephemeral range: east restarts on its port, which an outgoing connection
  // could otherwise have taken meanwhile.
  const [eastPublic, westPublic] = await freeLoopbackPorts(2);
  const roster = {
    east: { members: { 'east-1': { public: `http://127.0.0.1:${eastPublic}` } } },
    west: { members: { 'west-1': { public: `http://127.0.0.1:${westPublic}` } } },
  };
  const startEast = () =>
    startNode({ self: 'east-1', roster, httpProbe: true, publicPort: eastPublic, transfers: { budgetMs: 1_500 }, ...east });
  const west = await startNode({ mode: 'dc', self: 'west-1', roster, publicPort: westPublic, feedPullMs: 20 });
  t.teardown(() => west.host.stop());
  return { west, startEast };
}

test('a restarted member keeps its serial: a transfer cannot commit before the target applied the writes acknowledged since', async (t) => {
  const dir = await makeTempDir('authority-restart');
  t.teardown(() => dir.remove());
  const { west, startEast } = await twoMembers(t, { dataDir: dir.path });
  let east = await startEast();
  try {
    await east.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    for (let i = 1; i <= 3; i++) await write(east, `before-${i}`);
    await waitFor(() => west.node.replicas.applied('east-1').serial === 3, 'west to apply the three writes');
    const incarnation = east.node.feed.incarnation;

    // West stops pulling; east restarts from its data dir and acknowledges one more write.
    west.node.replicator.stop();
    await east.host.stop();
    east = await startEast();
    t.is(east.node.feed.incarnation, incarnation, 'the same history continues');
    t.is(east.node.feed.serial(), 3, 'the serial survived the restart');
    t.is((await write(east, 'after-restart')).serial, 4, 'serials never go back');

    // West still reads 3 for east's feed: the barrier (4) is not met, so nothing commits.
    const waiting = await east.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'after-restart', body: transfer });
    t.is(waiting.status, 504, JSON.stringify(waiting.body));
    t.like(waiting.body, { barrier: 4, frontier: 3 });
    t.like((await east.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, { home: 'east', epoch: 1 });

    // Once west applied the write made after the restart, the same key commits.
    west.node.replicator.start();
    await waitFor(() => west.node.replicas.applied('east-1').serial === 4, 'west to apply the write made after the restart');
    const committed = await east.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'after-restart', body: transfer });
    t.is(committed.status, 200, JSON.stringify(committed.body));
    t.like(committed.body, { barrier: 4, epoch: 2 });
  } finally {
    await east.host.stop();
  }
});

test('a member whose feed lost its storage restarts under a new incarnation: the target old reading counts for nothing', async (t) => {
  const dir = await makeTempDir('authority-lost-feed');
  t.teardown(() => dir.remove());
  // Ownership is durable (Raft under the temp dir); the feed is in memory, as if its disk were lost.
  const { west, startEast } = await twoMembers(t, { dataDir: null, consensus: { use: 'raft', options: { dataDir: join(dir.path, 'raft') } } });
  let east = await startEast();
  try {
    await east.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    for (let i = 1; i <= 3; i++) await write(east, `old-${i}`);
    await waitFor(() => west.node.replicas.applied('east-1').serial === 3, 'west to apply the three writes');
    west.node.replicator.stop();
    const oldIncarnation = east.node.feed.incarnation;
    await east.host.stop();
    east = await startEast();
    t.not(east.node.feed.incarnation, oldIncarnation);
    t.like((await east.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, { home: 'east', epoch: 1 });
    t.is((await write(east, 'new-1')).serial, 1, 'a new history starts at 1');

    const waiting = await east.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'new-history', body: transfer });
    t.is(waiting.status, 504, 'west holds serial 3 of the old history, which does not cover serial 1 of the new one');
    t.like(waiting.body, { barrier: 1, frontier: 0 });

    west.node.replicator.start();
    await waitFor(() => west.node.replicas.appliedSerial(east.node.feed.origin()) === 1, 'west to follow the new history');
    const committed = await east.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'new-history', body: transfer });
    t.is(committed.status, 200, JSON.stringify(committed.body));
  } finally {
    await east.host.stop();
  }
});

test('ownership, epochs, receipts and the audit (its chain head included) survive a host restart on the default durable consensus', async (t) => {
  const dir = await makeTempDir('authority-durable');
  t.teardown(() => dir.remove());
  const start = () => startNode({ dataDir: dir.path, defaultAuditStore: true, tracker: { suspectAfterMs: 1, deadAfterMs: 2 } });
  let n = await start();
  try {
    await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    n.probe.answer('west', 0);
    const first = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k-first', body: transfer });
    t.is(first.status, 200, JSON.stringify(first.body));
    t.like(first.body, { epoch: 2 });
    t.true((await readdir(join(dir.path, 'raft'))).some((name) => name.startsWith('wal-')), 'the Raft log is on disk under the data dir');
    t.true((await readdir(join(dir.path, 'feed'))).length > 0, 'the feed is on disk under the data dir');
    await n.host.stop();

    n = await start();
    t.like((await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, { home: 'west', epoch: 2 });
    const cancel = await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN });
    t.is(cancel.status, 409, 'the committed move is known after the restart');
    n.probe.answer('west', 0);
    const retry = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'k-first', body: transfer });
    t.is(retry.status, 200);
    t.deepEqual(retry.body, first.body, 'the same key answers the original decision: no second move');
    // West has no running member to freeze a planned move back: it is failed over.
    const back = await n.call('POST', '/availability/v1/commands', {
      token: ADMIN,
      key: 'k-back',
      body: { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' },
    });
    t.is(back.status, 200, JSON.stringify(back.body));
    t.like(back.body, { epoch: 3 }, 'epochs keep growing from where they were');
    // The trail goes on from its chain head as it was before the restart: the failover links to
    // the planned transfer's record, and the whole trail verifies against the replicated head.
    await waitFor(() => n.consensus.view().state.pending.size === 0, 'the failover record stored');
    const trail = await n.call('GET', '/availability/v1/audit?subject=proj', { token: READER });
    t.deepEqual(trail.body.records.map((r: { kind: string }) => r.kind), ['failover_transfer', 'planned_transfer', 'authority_established']);
    t.is(trail.body.records[0].prev_hash, trail.body.records[1].hash);
    const chain = await n.call('GET', '/availability/v1/audit/chain?subject=proj', { token: READER });
    const stored = (trail.body.records as Record<string, unknown>[]).map(({ from: _f, to: _t, epoch_after: _e, loss: _l, ...r }) => r).reverse();
    t.like(verifyTrail(stored as never, { anchors: chain.body.anchors, head: chain.body.head }), { ok: true, checked: 3, behind: false });
  } finally {
    await n.host.stop();
  }
});
