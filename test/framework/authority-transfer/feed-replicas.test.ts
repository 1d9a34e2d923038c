import test from 'ava';
import { MemoryFiles, type ByteFiles } from '@baton/kernel/internal/byte-files.js';
import { FeedReplicas } from '@baton/authority-transfer/internal/feed-replicas.js';

const entry = (serial: number) => ({ serial, authority: 'a', operation: `op${serial}`, epoch: 1 });

function replicasOver(disks: Map<string, ByteFiles>, retain = 100) {
  return new FeedReplicas('west-1', {
    filesFor: (origin) => {
      if (!disks.has(origin)) disks.set(origin, new MemoryFiles());
      return disks.get(origin)!;
    },
    retain,
    segmentEntries: 2,
  });
}

test('a peer never pulled reads as applied 0 under no incarnation', async (t) => {
  const replicas = replicasOver(new Map());
  await replicas.open(['east-1', 'west-1']);
  t.deepEqual(replicas.applied('east-1'), { incarnation: undefined, serial: 0, storage: undefined });
  t.is(replicas.appliedSerial({ member: 'east-1', incarnation: 'x' }), 0);
});

test('applied serials count only contiguous entries, stored before they count, and survive a restart', async (t) => {
  const disks = new Map<string, ByteFiles>();
  const replicas = replicasOver(disks);
  await replicas.open(['east-1']);
  await replicas.reset('east-1', 'inc-1');
  t.is(await replicas.apply('east-1', 'inc-1', [entry(1), entry(2), entry(4)]), 2, 'a gap stops the run');
  t.is(await replicas.apply('east-1', 'inc-1', [entry(2), entry(3)]), 2, 'a duplicate stops it too');
  t.is(await replicas.apply('east-1', 'inc-1', [entry(3)]), 3);
  const storage = replicas.applied('east-1').storage;
  t.truthy(storage);
  const restarted = replicasOver(disks);
  await restarted.open(['east-1']);
  t.deepEqual(restarted.applied('east-1'), { incarnation: 'inc-1', serial: 3, storage }, 'the same files answer under the same storage id');
});

test('a replica wiped by a lost disk answers under a new storage id, so a frontier read before is not trusted', async (t) => {
  const replicas = replicasOver(new Map());
  await replicas.open(['east-1']);
  await replicas.reset('east-1', 'inc-1');
  await replicas.apply('east-1', 'inc-1', [1, 2, 3].map(entry));
  const before = replicas.applied('east-1');
  const wiped = replicasOver(new Map());
  await wiped.open(['east-1']);
  await wiped.reset('east-1', 'inc-1');
  await wiped.apply('east-1', 'inc-1', [entry(1)]);
  const after = wiped.applied('east-1');
  t.is(after.incarnation, before.incarnation, 'the origin feed is the same history');
  t.is(after.serial, 1, 'but the serial went backwards');
  t.not(after.storage, before.storage);
});

test('a reading under another incarnation of the origin counts as 0', async (t) => {
  const replicas = replicasOver(new Map());
  await replicas.open(['east-1']);
  await replicas.reset('east-1', 'inc-old');
  await replicas.apply('east-1', 'inc-old', [1, 2, 3, 4, 5].map(entry));
  t.is(replicas.appliedSerial({ member: 'east-1', incarnation: 'inc-new' }), 0);
  await replicas.reset('east-1', 'inc-new');
  const { storage, ...position } = replicas.applied('east-1');
  t.deepEqual(position, { incarnation: 'inc-new', serial: 0 });
  t.truthy(storage);
  await t.throwsAsync(replicas.apply('east-1', 'inc-old', [entry(1)]), { message: /reset it first/ });
});

test('a replica keeps only `retain` entries on disk behind its applied serial', async (t) => {
  const disks = new Map<string, ByteFiles>();
  const replicas = replicasOver(disks, 2);
  await replicas.open(['east-1']);
  await replicas.reset('east-1', 'inc-1');
  await replicas.apply('east-1', 'inc-1', Array.from({ length: 10 }, (_, i) => entry(i + 1)));
  const segments = (await disks.get('east-1')!.list()).filter((n) => n.endsWith('.log'));
  t.true(segments.length <= 2, `kept ${segments.join(', ')}`);
  const restarted = replicasOver(disks, 2);
  await restarted.open(['east-1']);
  t.is(restarted.applied('east-1').serial, 10);
});
