import test from 'ava';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { Cluster } from './cluster-fixture.js';

const HOUR = 3_600_000;

/** Counts the calls that walk every stream, or every stream of a node, on the shared view. */
function countFullWalks(state: StreamMetadata): { walks: number } {
  const counter = { walks: 0 };
  const streams = state.streams.bind(state);
  const owned = state.streamsOwnedBy.bind(state);
  state.streams = (after) => {
    counter.walks += 1;
    return streams(after);
  };
  state.streamsOwnedBy = (node) => {
    counter.walks += 1;
    return owned(node);
  };
  return counter;
}

async function clusterWith(streams: number, watcherIntervalMs?: number): Promise<Cluster> {
  const cluster = new Cluster({}, watcherIntervalMs);
  await cluster.addNode('a', 1_000);
  await cluster.addNode('b', 1_000);
  for (let i = 0; i < streams; i += 1) await cluster.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  await cluster.until(() => Array.from({ length: streams }, (_, i) => `s${i}`).every((s) => cluster.serving(s)), 'every stream open on a');
  return cluster;
}

test('with no retry pass at all, a transfer settles from change notifications alone, and no step walks every stream', async (t) => {
  const cluster = await clusterWith(40, HOUR);
  const counter = countFullWalks(cluster.state);
  await cluster.must({ type: 'transfer', stream: 's7', target: 'b' });
  await cluster.until(() => cluster.serving('s7'), 's7 open on b', 5_000);
  t.like(cluster.state.stream('s7'), { owner: 'b', epoch: 2 });
  t.is(counter.walks, 0, 'the watchers looked at the stream the entries named, not at every stream');
  await cluster.stopAll();
});

test('transfers a drain starts from its queue are seen from the entry that started them (no retry pass needed)', async (t) => {
  const cluster = await clusterWith(12, HOUR);
  const counter = countFullWalks(cluster.state);
  await cluster.must({ type: 'drain', node: 'a', maxInFlight: 3 });
  const ids = Array.from({ length: 12 }, (_, i) => `s${i}`);
  await cluster.until(
    () => ids.every((s) => cluster.state.stream(s)?.owner === 'b' && cluster.serving(s)),
    'the drain to move every stream to b',
    10_000,
  );
  t.is(cluster.state.ownedCount('a'), 0);
  t.is(counter.walks, 0);
  await cluster.stopAll();
});

test('the once-per-second retry settles a failed step by looking only at the transfers that concern the node', async (t) => {
  const cluster = await clusterWith(40);
  const counter = countFullWalks(cluster.state);
  cluster.failProposals('complete', 1);
  await cluster.must({ type: 'transfer', stream: 's3', target: 'b' });
  await cluster.until(() => cluster.attempts.some((a) => a.command.type === 'complete'), 'the first completion attempt', 2_000);
  t.truthy(cluster.state.transfer('s3'), 'the refused completion left the transfer pending');
  await cluster.until(() => cluster.serving('s3') && cluster.state.stream('s3')?.owner === 'b', 'the retry to settle s3', 3_000);
  t.true(cluster.attempts.filter((a) => a.command.type === 'complete').length >= 2, 'the completion was proposed again');
  t.is(counter.walks, 0, 'the retry pass walked the transfer index, not every stream');
  await cluster.stopAll();
});
