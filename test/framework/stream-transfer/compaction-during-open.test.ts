import test from 'ava';
import { Cluster } from './cluster-fixture.js';

// Each lifecycle entry counts 64 bytes towards compaction: with a threshold of 128, the second
// stream's own open entry is what starts a compaction, while that session is not registered yet.
test('a WAL compaction started by a session open keeps that open, so a crash right after still recovers and closes the session', async (t) => {
  const cluster = new Cluster({ walCompactionBytes: 128 });
  await cluster.addNode('a');
  await cluster.must({ type: 'create-stream', stream: 's1', node: 'a' });
  await cluster.until(() => cluster.serving('s1'), 's1 open on a');
  await cluster.must({ type: 'create-stream', stream: 's2', node: 'a' });
  await cluster.until(() => cluster.serving('s2'), 's2 open on a');
  t.like(await cluster.node('a').append('s2', ['r0']), { first: 0, epoch: 1 });
  cluster.crash('a');
  await cluster.restart('a');
  // Recovery found the session in the WAL and closed it at its tail: the stream reopens at 2.
  await cluster.until(
    () => cluster.serving('s2') && cluster.state.stream('s2')!.epoch === 2,
    's2 reopened at epoch 2',
  );
  t.like(cluster.state.stream('s2')!, { owner: 'a', epoch: 2, tail: 1 });
  t.like(await cluster.node('a').append('s2', ['r1']), { first: 1, epoch: 2 });
  t.deepEqual(
    (await cluster.node('a').read('s2', 0, 10)).map((r) => r.body),
    ['r0', 'r1'],
  );
  await cluster.stopAll();
});
