import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { AppendUnavailableError } from '@baton/stream-transfer/internal/errors.js';
import { Cluster } from './cluster-fixture.js';

// An object store outage on the owner: the batch in flight is held until it is stored (it is
// logged with its offsets), and what arrives meanwhile is refused at once rather than queued
// unanswered behind it for the whole outage.

test('during a store outage new appends are refused at once, never stored; the held batch lands once the store is back', async (t) => {
  const cluster = new Cluster();
  await cluster.addNode('a');
  await cluster.must({ type: 'create-stream', stream: 's', node: 'a' });
  await cluster.until(() => cluster.serving('s'), 'stream s open on a');
  const node = cluster.node('a');
  t.like(await node.append('s', ['before']), { first: 0 });

  cluster.store.failWith(new StoreUnavailableError('memory object store', 'down for the test'));
  let heldSettled = false;
  const held = node.append('s', ['held']).finally(() => (heldSettled = true));
  // Let the flush fail at least once, so the session knows the store is down.
  await cluster.quiesce();
  t.false(heldSettled, 'the batch in flight is not answered while the store is down');
  const refused = await t.throwsAsync(node.append('s', ['refused']), {
    instanceOf: AppendUnavailableError,
  });
  t.regex(refused!.message, /object store is unavailable/);

  cluster.store.failWith(undefined);
  cluster.clock.advance(2_000);
  t.like(await held, { first: 1 }, 'the held batch is acknowledged at its logged offset');
  t.like(
    await node.append('s', ['after']),
    { first: 2 },
    'appends are taken again once a write succeeded',
  );
  t.deepEqual(
    (await node.read('s', 0, 10)).map((r) => r.body),
    ['before', 'held', 'after'],
  );
  await cluster.stopAll();
});
