import test from 'ava';
import type { KvCommand } from '@baton/conformance/internal/kv-state-machine.js';
import { RAFT_SNAPSHOT_FORMAT } from '@baton/plugin-raft/internal/driver/raft-admin.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import { imageOfPieces } from '@baton/plugin-raft/internal/storage/snapshot-image.js';
import { SimCluster } from '../support/sim-cluster.js';

const put = (key: string, value: string): KvCommand => ({ op: 'put', key, value });

test('members: a follower answers with the leader\'s view (match, liveness) and its own applied index; a cut-off voter is no longer live', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 41);
  await c.startAll();
  const leader = await c.waitForLeader();
  const written = await c.settle(leader.propose(put('a', '1')));
  const [follower, other] = [...c.members.values()].filter((m) => m !== leader);
  await c.until(() => [...c.members.values()].every((m) => m.view().applied.index >= written.position.index));
  const details = await c.settle(follower.members());
  t.is(details.from, leader.self);
  t.is(details.leader, leader.self);
  t.deepEqual(details.voters.map((v) => v.id), ['n1', 'n2', 'n3']);
  for (const v of details.voters) {
    t.true((v.match ?? 0) >= written.position.index, `${v.id} match`);
    t.true(v.live, `${v.id} live`);
    t.is(v.leader, v.id === leader.self);
  }
  t.is(details.voters.find((v) => v.id === follower.self)!.applied, follower.view().applied.index);

  c.partition([other.self], [leader.self, follower.self]);
  let seen = details;
  await c.until(() => {
    void leader.members().then((d) => (seen = d));
    return seen.voters.find((v) => v.id === other.self)?.live === false;
  }, 10_000, `${other.self} not live at the leader`);
  t.true(seen.voters.find((v) => v.id === follower.self)!.live);
  await c.stopAll();
});

test('moveLeader from any member makes the named voter leader; a move to the leader changes nothing', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], {}, 42);
  await c.startAll();
  const leader = await c.waitForLeader();
  await c.settle(leader.propose(put('a', '1')));
  const [asker, target] = [...c.members.values()].filter((m) => m !== leader);
  const moved = await c.settle(asker.moveLeader(target.self));
  t.is(moved.leader, target.self);
  await c.until(() => target.leadership().isLeader, 10_000, `${target.self} leading`);
  t.true(target.leadership().term > 0);
  const again = await c.settle(target.moveLeader(target.self));
  t.is(again.leader, target.self);
  await c.stopAll();
});

test('an exported snapshot holds every applied write and seeds a new cluster that starts from it, idempotency window included', async (t) => {
  const c = new SimCluster(['n1', 'n2', 'n3'], { snapshotInterval: 4 }, 43);
  await c.startAll();
  const leader = await c.waitForLeader();
  const keyed = await c.settle(leader.propose(put('keyed', 'v'), { idempotencyKey: 'k-1' }));
  for (let i = 0; i < 10; i++) await c.settle(leader.propose(put(`k${i}`, String(i))));
  const follower = [...c.members.values()].find((m) => m !== leader)!;
  const snapshot = await c.settle(follower.exportSnapshot());
  t.is(snapshot.format, RAFT_SNAPSHOT_FORMAT);
  t.true(snapshot.index >= keyed.position.index + 10);
  t.deepEqual(snapshot.voters, ['n1', 'n2', 'n3']);
  const expected = leader.view().state.data;
  await c.stopAll();

  const fresh = new SimCluster(['n1', 'n2', 'n3'], {}, 44);
  for (const id of ['n1', 'n2', 'n3']) {
    const storage = new MemoryRaftStorage();
    await storage.persist({
      hardState: { term: snapshot.term, vote: '', commit: snapshot.index },
      entries: [],
      snapshot: { meta: { index: snapshot.index, term: snapshot.term, voters: snapshot.voters }, data: imageOfPieces(snapshot.pieces) },
    });
    await fresh.start(id, storage);
  }
  const restored = await fresh.waitForLeader();
  t.deepEqual(restored.view().state.data, expected);
  const retry = await fresh.settle(restored.propose(put('keyed', 'v'), { idempotencyKey: 'k-1' }));
  t.true(retry.replayed, 'the window came with the backup');
  t.deepEqual(retry.position, keyed.position);
  await fresh.stopAll();
});
