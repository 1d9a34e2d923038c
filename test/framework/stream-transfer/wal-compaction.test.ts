import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { Cluster } from './cluster-fixture.js';

test('the WAL is compacted to what is live, and a node recovers from a compacted WAL', async (t) => {
  const cluster = new Cluster({ walCompactionBytes: 512 });
  await cluster.addNode('a');
  await cluster.addNode('b');
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 's open');
  const a = cluster.node('a');
  for (let i = 0; i < 200; i++) await a.append('s', [`record-${i}-${'x'.repeat(50)}`], { id: 'p', seq: i });
  t.true(cluster.walBytes('a') < 4_096, `WAL holds ${cluster.walBytes('a')} bytes after 200 appends of ~60 bytes`);
  // A record logged but not flushed must survive the compaction and the crash.
  cluster.store.failWith(new StoreUnavailableError('memory object store', 'down'));
  void a.append('s', ['unflushed'], { id: 'p', seq: 200 }).catch(() => undefined);
  await cluster.quiesce();
  cluster.crash('a');
  cluster.store.failWith(undefined);
  await cluster.restart('a');
  await cluster.until(() => cluster.serving('s'), 's reopened');
  t.like(cluster.state.stream('s')!, { epoch: 2, tail: 201 });
  const restarted = cluster.node('a');
  const records = await restarted.read('s', 0, 1_000);
  t.is(records.length, 201);
  t.is(records[200].body, 'unflushed');
  // Producer marks survived compaction: the retried batch is not appended again.
  t.like(await restarted.append('s', ['unflushed'], { id: 'p', seq: 200 }), { first: 200, duplicate: true });
  await cluster.stopAll();
});
