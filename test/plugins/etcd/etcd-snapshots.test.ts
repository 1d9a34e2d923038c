import test from 'ava';
import { Etcd3 } from 'etcd3';
import { NotAppendedError } from '@baton/contracts/internal/metadata-consensus.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { LogKeys } from '@baton/plugin-etcd/internal/log-keys.js';
import { eventually, makeMember, startGroup } from './etcd-fixture.js';

let etcd: EtcdCluster;
let raw: Etcd3;

test.before(async () => {
  etcd = await EtcdCluster.start();
  raw = new Etcd3({ hosts: etcd.endpoints });
});

test.after.always(async () => {
  raw?.close();
  await etcd?.close();
});

const countKeys = (prefix: string) => raw.getAll().prefix(prefix).count();

/** The current snapshot manifest, and the revision it was read at. */
async function manifestOf(
  keys: LogKeys,
): Promise<{ seq: number; chunks: number; revision: string } | undefined> {
  const response = await raw.get(keys.snapshotManifest).exec();
  const kv = response.kvs[0];
  if (!kv) return undefined;
  const manifest = JSON.parse(kv.value.toString('utf8')) as { seq: number; chunks: number };
  return { ...manifest, revision: response.header.revision };
}

/**
 * True when etcd holds exactly the chunks the manifest names, both read at one revision. A
 * snapshot being written holds chunks no manifest names yet, so callers wait for this rather
 * than compare once.
 */
async function onlyCurrentChunks(keys: LogKeys): Promise<boolean> {
  const manifest = await manifestOf(keys);
  if (!manifest) return false;
  const stored = await raw
    .getAll()
    .prefix(keys.snapshotChunkPrefix)
    .revision(manifest.revision)
    .count();
  return stored === manifest.chunks;
}

test('the leader stores snapshots and compacts the log; a member that starts later restores the snapshot and replays old decisions', async (t) => {
  const group = await startGroup(etcd, 1, {
    snapshotEveryEntries: 10,
    retainEntriesAfterSnapshot: 3,
    snapshotChunkBytes: 1024,
  });
  t.teardown(() => group.stop());
  const [leader] = group.members;
  await eventually(() => leader.leadership().isLeader, 'the only voter leads');
  const keys = new LogKeys(group.prefix);
  // Chunks a writer left when it died before swapping its manifest in: the next swap removes them.
  await raw.put(keys.snapshotChunk('0000000000000001-crashed', 0)).value('orphan');

  const first = await leader.propose(
    { op: 'put', key: 'k0', value: 'v0' },
    { idempotencyKey: 'op-0' },
  );
  // Big values, so the snapshot spans several chunks.
  for (let n = 1; n < 40; n++) {
    await leader.propose(
      { op: 'put', key: `k${n}`, value: 'x'.repeat(200) + n },
      { idempotencyKey: `op-${n}` },
    );
  }
  await eventually(async () => (await countKeys(keys.logPrefix)) < 20, 'the log is compacted');
  // Whatever snapshot was in progress when the last entry landed, the leader ends on one within
  // snapshotEveryEntries of the head (entry 41: the bootstrap, then 40 commands).
  await eventually(
    async () => leader.appliedSeq - ((await manifestOf(keys))?.seq ?? 0) < 10,
    'a snapshot covers all but the last few entries',
  );
  await eventually(() => onlyCurrentChunks(keys), 'replaced snapshots left no chunks');
  const manifest = (await manifestOf(keys))!;
  t.true(manifest.seq >= 32, `a recent snapshot (at ${manifest.seq})`);
  t.true(manifest.chunks > 1, 'stored in several chunks');
  t.is(await countKeys(keys.snapshotChunkPrefix), manifest.chunks, 'no chunk outside the manifest');
  t.false(await raw.get(keys.entry(2)).exists(), 'entries below the snapshot are gone');

  const late = makeMember(etcd.endpoints, group.prefix, 'late');
  await late.start();
  t.teardown(() => late.stop());
  const view = await late.read();
  t.deepEqual(view.state, leader.view().state, 'the late member reaches the same state');
  t.deepEqual(view.applied, leader.view().applied);
  const replay = await late.propose(
    { op: 'put', key: 'k0', value: 'v0' },
    { idempotencyKey: 'op-0' },
  );
  t.deepEqual(replay, { ...first, replayed: true }, 'a decision from before the snapshot replays');
  const reused = await late
    .propose({ op: 'put', key: 'k0', value: 'other' }, { idempotencyKey: 'op-0' })
    .catch((error: unknown) => error);
  t.true(reused instanceof NotAppendedError && reused.reason === 'key_reused');
  t.deepEqual(late.membership().voters, ['n1'], 'voters come with the snapshot');
});

test('idempotency claims the window forgot are pruned from etcd, and such a key is then new again', async (t) => {
  const group = await startGroup(etcd, 1, {
    snapshotEveryEntries: 5,
    retainEntriesAfterSnapshot: 0,
    idempotencyWindow: 3,
  });
  t.teardown(() => group.stop());
  const [member] = group.members;
  await eventually(() => member.leadership().isLeader, 'the only voter leads');
  const keys = new LogKeys(group.prefix);
  const seqOf = new Map<string, number>();
  for (let n = 0; n < 12; n++) {
    await member.propose({ op: 'put', key: 'k', value: `v${n}` }, { idempotencyKey: `op-${n}` });
    seqOf.set(`op-${n}`, member.appliedSeq);
  }
  // A snapshot skipped because another was being written is taken once that one ends, so the
  // last snapshot ends within snapshotEveryEntries of the head, even though nothing follows.
  let snapshotSeq = 0;
  await eventually(async () => {
    snapshotSeq = (await manifestOf(keys))?.seq ?? 0;
    return member.appliedSeq - snapshotSeq < 5;
  }, 'a snapshot covers all but the last few entries');
  // What the window (3 keys) had forgotten as of that snapshot: every key but the 3 latest at or
  // below it. Those claims, and only those, are pruned.
  const covered = [...seqOf].filter(([, seq]) => seq <= snapshotSeq).map(([key]) => key);
  const forgotten = covered.slice(0, -3);
  t.true(forgotten.length >= 5, `the snapshot at ${snapshotSeq} forgot op-0 to op-4 at least`);
  await eventually(async () => {
    for (const key of forgotten) if (await raw.get(keys.idem(key)).exists()) return false;
    return true;
  }, 'forgotten claims are pruned');
  t.is(await countKeys(keys.idemPrefix), 12 - forgotten.length, 'remembered claims stay');
  t.true(await raw.get(keys.idem('op-11')).exists(), 'the newest claim stays');

  // op-0 was forgotten: the key is free for a new command, which is a fresh decision.
  const again = await member.propose(
    { op: 'put', key: 'k', value: 'new' },
    { idempotencyKey: 'op-0' },
  );
  t.false(again.replayed);
  t.is(member.view().state.data.k, 'new');
});

test('a key forgotten by the window but still claimed in etcd is taken over by the next proposal', async (t) => {
  // No snapshots here, so nothing prunes the claim: the proposal itself must replace it.
  const group = await startGroup(etcd, 1, { idempotencyWindow: 2 });
  t.teardown(() => group.stop());
  const [member] = group.members;
  const keys = new LogKeys(group.prefix);
  await member.propose({ op: 'put', key: 'k', value: 'first' }, { idempotencyKey: 'a' });
  await member.propose({ op: 'put', key: 'k', value: 'second' }, { idempotencyKey: 'b' });
  await member.propose({ op: 'put', key: 'k', value: 'third' }, { idempotencyKey: 'c' });
  t.true(await raw.get(keys.idem('a')).exists(), 'the stale claim is still in etcd');
  const retaken = await member.propose(
    { op: 'put', key: 'k', value: 'fourth' },
    { idempotencyKey: 'a' },
  );
  t.false(retaken.replayed);
  t.is(member.view().state.data.k, 'fourth');
  const claim = JSON.parse((await raw.get(keys.idem('a')).string())!) as { seq: number };
  t.is(claim.seq, member.appliedSeq, 'the claim now names the new entry');
});
