import test from 'ava';
import {
  type KvCommand,
  type KvState,
  kvStateMachine,
} from '@baton/conformance/internal/kv-state-machine.js';
import { RaftSimCluster } from '@baton/testing/internal/raft-sim/raft-sim-cluster.js';
import { SimDisk } from '@baton/testing/internal/sim/disk.js';
import type { Entry, Snapshot } from '@baton/plugin-raft/internal/core/types.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { ReplicatedState } from '@baton/plugin-raft/internal/driver/replicated-state.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import type { RaftStorage } from '@baton/plugin-raft/internal/storage/raft-storage.js';
import { piecewiseKv } from '../support/piecewise-kv.js';
import { SimCluster } from '../support/sim-cluster.js';
import { SimDiskFiles } from '../support/sim-disk-files.js';
import { MemoryLogger } from '../support/silent-logger.js';

const put = (key: string, value: string): KvCommand => ({ op: 'put', key, value });
let index = 0;
const entry = (command: KvCommand, key?: string): Entry => ({
  term: 1,
  index: ++index,
  type: 'normal',
  data: key === undefined ? { c: command } : { c: command, k: key, f: JSON.stringify(command) },
});

for (const [name, machine] of [
  ['a state machine with capture (many pieces)', piecewiseKv(2)],
  ['a state machine without capture (one piece)', kvStateMachine],
] as const) {
  test(`${name}: a capture is frozen, and its pieces through JSON assemble into the state and window at capture time`, (t) => {
    index = 0;
    const rs = new ReplicatedState(machine, 100, ['n1']);
    for (let i = 0; i < 9; i++) rs.apply(entry(put(`k${i}`, `v${i}`), i % 3 === 0 ? `key-${i}` : undefined));
    const atCapture = structuredClone(rs.state);
    const image = rs.capture();
    // Applies after the capture change the live state, never the capture.
    for (let i = 0; i < 5; i++) rs.apply(entry(put(`k${i}`, 'changed'), `later-${i}`));
    rs.apply(entry(put('new', 'x')));
    const pieces = [...image.pieces()].map((p) => JSON.parse(JSON.stringify(p)));
    if (machine !== kvStateMachine) t.true(pieces.length >= 5, `${pieces.length} pieces`);
    t.deepEqual([...image.pieces()].map((p) => JSON.parse(JSON.stringify(p))), pieces, 'pieces() starts again each time');
    const copy = new ReplicatedState(machine, 100, ['n1']);
    const snapshot: Snapshot = { meta: { index: 9, term: 1, voters: ['n1'] }, data: { image: true, pieces: () => pieces } };
    copy.restore(snapshot);
    t.deepEqual(copy.state, atCapture);
    t.deepEqual(copy.applied, { term: 1, index: 9 });
    t.truthy(copy.window.lookup('key-3'), 'the window came along');
    t.is(copy.window.lookup('later-1'), undefined, 'decisions after the capture did not');
    t.is(copy.window.size, 3);
    t.is(rs.state.data.k1, 'changed');
  });
}

test('the window travels in pieces of at most 1,000 decisions, oldest first, and keeps its order', (t) => {
  index = 0;
  const rs = new ReplicatedState(kvStateMachine, 5_000, ['n1']);
  for (let i = 0; i < 2_500; i++) rs.apply(entry(put('k', `${i}`), `key-${i}`));
  const pieces = [...rs.capture().pieces()] as { w?: unknown[] }[];
  t.deepEqual(pieces.filter((p) => p.w).map((p) => p.w!.length), [1_000, 1_000, 500]);
  const copy = new ReplicatedState(kvStateMachine, 2_000, ['n1']);
  copy.restore({ meta: { index: 2_500, term: 1, voters: ['n1'] }, data: { image: true, pieces: () => pieces } });
  // A smaller window keeps the newest decisions, as it would have applying them.
  t.is(copy.window.size, 2_000);
  t.is(copy.window.lookup('key-499'), undefined);
  t.truthy(copy.window.lookup('key-500'));
  t.deepEqual(copy.window.lookup('key-2499')!.position, { term: 1, index: 2_500 });
});

test('a follower behind the compaction point installs a snapshot sent as many chunks, window included', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], { snapshotInterval: 10, snapshotRetain: 0 }, 31, undefined, piecewiseKv(1));
  await c.startAll();
  const leader = await c.waitForLeader();
  const lagging = [...c.members.values()].find((m) => m !== leader)!;
  c.network.partition([lagging.self], [...c.members.keys()].filter((id) => id !== lagging.self));
  const keyed = await c.settle(leader.propose(put('w', '1'), { idempotencyKey: 'early' }));
  for (let i = 0; i < 40; i++) await c.settle(leader.propose(put(`k${i}`, String(i))));
  await c.until(() => leader.stats.snapshotsTaken > 0, 5_000, 'the leader to compact its log');
  c.network.heal();
  await c.until(() => lagging.view().applied.index >= leader.view().applied.index, 10_000, 'the lagging member to catch up');
  t.true(lagging.stats.snapshotsInstalled > 0, 'it caught up through a snapshot');
  t.true(lagging.stats.snapshotChunksReceived >= 40, `${lagging.stats.snapshotChunksReceived} chunks: one key each`);
  t.true(leader.stats.snapshotChunksSent >= 40);
  t.deepEqual(lagging.view().state, leader.view().state);
  const retry = await c.settle(lagging.propose(put('w', '1'), { idempotencyKey: 'early' }));
  t.true(retry.replayed, 'the window came with the snapshot');
  t.deepEqual(retry.position, keyed.position);
  await c.stopAll();
});

test('snapshot chunks dropped and duplicated on the way: the follower asks again and still installs', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], { snapshotInterval: 10, snapshotRetain: 0 }, 32, undefined, piecewiseKv(1));
  await c.startAll();
  const leader = await c.waitForLeader();
  const lagging = [...c.members.values()].find((m) => m !== leader)!;
  c.network.partition([lagging.self], [...c.members.keys()].filter((id) => id !== lagging.self));
  for (let i = 0; i < 60; i++) await c.settle(leader.propose(put(`k${i}`, String(i))));
  await c.until(() => leader.stats.snapshotsTaken > 0, 5_000, 'the leader to compact its log');
  c.setLinks({ dropProbability: 0.2, duplicateProbability: 0.2, minDelayMs: 1, maxDelayMs: 8 });
  c.network.heal();
  await c.until(() => lagging.stats.snapshotsInstalled > 0, 60_000, 'the lagging member to install a snapshot');
  c.setLinks({ dropProbability: 0, duplicateProbability: 0 });
  const last = await c.settle(leader.propose(put('last', 'x')));
  await c.until(() => lagging.view().applied.index >= last.position.index, 10_000, 'the lagging member to catch up');
  t.deepEqual(lagging.view().state.data, leader.view().state.data);
  t.true(lagging.stats.snapshotChunksReceived > 60, `${lagging.stats.snapshotChunksReceived} chunks received`);
  await c.stopAll();
});

/** Memory storage whose snapshot writes wait until released: a slow disk, seen from the loop. */
class HeldSnapshotWrites extends MemoryRaftStorage {
  held: (() => void)[] = [];
  private holding = true;
  override async writeSnapshot(): Promise<void> {
    if (this.holding) await new Promise<void>((resolve) => this.held.push(resolve));
  }
  release(): void {
    this.holding = false;
    for (const r of this.held.splice(0)) r();
  }
}

test('writing a snapshot does not hold the loop: proposals commit while it is written, and the log is compacted after', async (t) => {
  const disks = new Map<string, HeldSnapshotWrites>();
  const logger = new MemoryLogger();
  const c = new RaftSimCluster({
    voters: ['n1', 'n2', 'n3'],
    machine: piecewiseKv(1),
    seed: 33,
    logger,
    factory: {
      storage: (id) => {
        const disk = new HeldSnapshotWrites();
        disks.set(id, disk);
        return disk as RaftStorage;
      },
      member: (options) => new RaftConsensus({ ...options, snapshotInterval: 10, snapshotRetain: 0 }),
    },
  });
  await c.startAll();
  const leader = (await c.waitForLeader()) as RaftConsensus<KvState, KvCommand, unknown>;
  for (let i = 0; i < 12; i++) await c.settle(leader.propose(put(`a${i}`, 'x')));
  await c.until(() => disks.get(leader.self)!.held.length > 0, 5_000, 'a snapshot write to start');
  // The write is stuck on the disk; the member goes on committing.
  for (let i = 0; i < 25; i++) await c.settle(leader.propose(put(`b${i}`, 'y')));
  t.is(leader.stats.snapshotsTaken, 0, 'not in force before it is durable');
  t.true(leader.status().applied >= 37);
  t.is(disks.get(leader.self)!.held.length, 1, 'one snapshot at a time');
  for (const d of disks.values()) d.release();
  await c.until(() => leader.stats.snapshotsTaken > 0, 5_000, 'the snapshot to go in force');
  const first = logger.records.find((r) => r.msg === 'snapshot taken, log compacted' && r.fields.member === leader.self);
  t.true((first?.fields.index as number) >= 10 && (first?.fields.index as number) < 37, 'the snapshot is of the state when it was captured');
  await c.stopAll();
});

test('a member restarted from file storage recovers a snapshot written in pieces, with its window', async (t) => {
  const disks = new Map<string, SimDiskFiles>();
  const c = new RaftSimCluster({
    voters: ['n1', 'n2', 'n3'],
    machine: piecewiseKv(1),
    seed: 34,
    factory: {
      storage: (id) => {
        const files = new SimDiskFiles(new SimDisk());
        disks.set(id, files);
        return new FileRaftStorage(files, { segmentBytes: 4_096 }) as RaftStorage;
      },
      member: (options) => new RaftConsensus({ ...options, snapshotInterval: 8, snapshotRetain: 2 }),
    },
  });
  await c.startAll();
  const leader = await c.waitForLeader();
  const first = await c.settle(leader.propose(put('a', '1'), { idempotencyKey: 'k-a' }));
  for (let i = 0; i < 30; i++) await c.settle(leader.propose(put(`b${i}`, 'x')));
  const victim = [...c.members.values()].find((m) => m !== leader)! as RaftConsensus<KvState, KvCommand, unknown>;
  await c.until(() => victim.view().applied.index >= leader.view().applied.index && victim.stats.snapshotsTaken > 0, 5_000, 'a snapshot on the victim');
  const files = await disks.get(victim.self)!.list();
  t.true(files.some((f) => /^snap-\d{16}\.snap$/.test(f)), files.join(', '));
  const before = victim.view();
  await c.crash(victim.self);
  const again = (await c.start(victim.self)) as RaftConsensus<KvState, KvCommand, unknown>;
  t.true(again.status().snapshotIndex > 0, 'started from its snapshot');
  await c.until(() => again.view().applied.index >= before.applied.index, 5_000, 'the restarted member to re-apply');
  t.deepEqual(again.view().state, before.state);
  const retry = await c.settle(again.propose(put('a', '1'), { idempotencyKey: 'k-a' }));
  t.true(retry.replayed);
  t.deepEqual(retry.position, first.position);
  await c.stopAll();
});
