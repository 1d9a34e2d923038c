import test from 'ava';
import { NotHomeError, StaleEpochError } from '@baton/authority-transfer/internal/transfer-errors.js';
import { FeedReplicas } from '@baton/authority-transfer/internal/feed-replicas.js';
import { HomeCatchUp } from '@baton/authority-transfer/internal/home-catch-up.js';
import { WriteFence } from '@baton/authority-transfer/internal/write-fence.js';
import { engineHarness, establish, request } from './harness.js';

type Harness = Awaited<ReturnType<typeof engineHarness>>;
const fenceAt = (h: Harness, datacenter: string, member = `${datacenter}-1`) =>
  new WriteFence(h.consensus, h.feed, datacenter, new HomeCatchUp(member, datacenter, new FeedReplicas(member), h.consensus, h.clock, h.log));

test('a write in flight under the previous epoch is rejected after the transfer and never finalised', async (t) => {
  const h = await engineHarness();
  await establish(h.consensus, 'proj', 'east');
  const fence = fenceAt(h, 'east');
  const inFlight = fence.admit('proj', 1);
  h.probe.answer('west', 0);
  await h.engine.start(request());
  await t.throwsAsync(fence.finalise(inFlight, 'late write'), { instanceOf: NotHomeError });
  t.is(h.feed.serial(), 0, 'the stale write never reached the feed');
});

test('the new home accepts writes only under the minted epoch', async (t) => {
  const h = await engineHarness();
  await establish(h.consensus, 'proj', 'east');
  h.probe.answer('west', 0);
  await h.engine.start(request());
  const west = fenceAt(h, 'west');
  await t.throwsAsync(west.write('proj', 1, 'old epoch'), { instanceOf: StaleEpochError, message: /epoch 1 is stale \(current epoch 2\)/ });
  // An epoch not minted yet is refused the same way, and said as what it is.
  await t.throwsAsync(west.write('proj', 999, 'future epoch'), { instanceOf: StaleEpochError, message: /epoch 999 names an epoch not minted yet \(current epoch 2\)/ });
  const entry = await west.write('proj', 2, 'new epoch');
  t.like(entry, { serial: 1, epoch: 2, authority: 'proj' });
});

test('a write to an authority without home is refused', async (t) => {
  const h = await engineHarness();
  const fence = fenceAt(h, 'east');
  t.throws(() => fence.admit('ghost', 1), { instanceOf: NotHomeError, message: /no home yet/ });
});
