import test from 'ava';
import { SimDisk } from '@baton/testing/internal/sim/disk.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array | undefined) =>
  data === undefined ? undefined : new TextDecoder().decode(data);

test('synced appends survive a crash, unsynced ones are lost', (t) => {
  const disk = new SimDisk();
  disk.append('log', bytes('a'));
  disk.append('log', bytes('b'));
  disk.sync('log');
  disk.append('log', bytes('c'));
  t.is(text(disk.read('log')), 'abc');
  t.true(disk.isDirty('log'));
  disk.crash();
  t.is(text(disk.read('log')), 'ab');
  t.false(disk.isDirty('log'));
});

test('a file never synced disappears in a crash', (t) => {
  const disk = new SimDisk();
  disk.write('fresh', bytes('x'));
  disk.crash();
  t.false(disk.exists('fresh'));
  t.deepEqual(disk.keys(), []);
});

test('an unsynced overwrite reverts to the synced content', (t) => {
  const disk = new SimDisk();
  disk.write('hard-state', bytes('term=1'));
  disk.sync();
  disk.write('hard-state', bytes('term=2'));
  disk.append('hard-state', bytes('!'));
  disk.crash({});
  t.is(text(disk.read('hard-state')), 'term=1');
});

test('an unsynced delete is undone by a crash; a synced one is not', (t) => {
  const disk = new SimDisk();
  disk.write('a', bytes('1'));
  disk.write('b', bytes('2'));
  disk.sync();
  disk.delete('a');
  disk.delete('b');
  disk.sync('b');
  disk.crash();
  t.is(text(disk.read('a')), '1');
  t.false(disk.exists('b'));
});

test('sync of one key leaves the others unsynced', (t) => {
  const disk = new SimDisk();
  disk.write('a', bytes('1'));
  disk.write('b', bytes('2'));
  disk.sync('a');
  disk.crash();
  t.deepEqual(disk.keys(), ['a']);
});

test('tearing keeps a prefix of the unsynced appends, the same one for the same seed', (t) => {
  const run = (seed: number) => {
    const disk = new SimDisk(new SeededRng(seed));
    disk.append('log', bytes('synced|'));
    disk.sync();
    disk.append('log', bytes('0123456789'));
    disk.append('log', bytes('abcdefghij'));
    disk.crash({ tearUnsyncedAppends: true });
    return text(disk.read('log'))!;
  };
  const lengths = new Set<number>();
  for (let seed = 1; seed <= 40; seed++) {
    const survived = run(seed);
    t.true('synced|0123456789abcdefghij'.startsWith(survived), survived);
    t.true(survived.startsWith('synced|'));
    t.is(run(seed), survived);
    lengths.add(survived.length);
  }
  t.true(lengths.size > 5, 'tears land at many different offsets');
});

test('tearing needs an rng, and says so', (t) => {
  t.throws(() => new SimDisk().crash({ tearUnsyncedAppends: true }), {
    message: /needs the SimDisk to be built with an Rng/,
  });
});

test('reads and writes copy: mutating a buffer never changes the disk', (t) => {
  const disk = new SimDisk();
  const data = bytes('abc');
  disk.write('k', data);
  data[0] = 0;
  const read = disk.read('k')!;
  read[1] = 0;
  t.is(text(disk.read('k')), 'abc');
});

test('keys are listed sorted by prefix, and bad keys are refused', (t) => {
  const disk = new SimDisk();
  for (const key of ['wal/2', 'wal/1', 'snap/1']) disk.write(key, bytes(key));
  t.deepEqual(disk.keys('wal/'), ['wal/1', 'wal/2']);
  t.throws(() => disk.write('', bytes('x')), { instanceOf: TypeError });
  t.is(disk.stats().writes, 3);
});

test('truncate within the unsynced tail keeps the synced prefix; into it, a crash restores it', (t) => {
  const disk = new SimDisk();
  disk.append('log', bytes('abc'));
  disk.sync();
  disk.append('log', bytes('def'));
  disk.truncate('log', 4);
  t.is(text(disk.read('log')), 'abcd');
  disk.crash();
  t.is(text(disk.read('log')), 'abc');
  disk.truncate('log', 1);
  disk.append('log', bytes('X'));
  disk.crash();
  t.is(text(disk.read('log')), 'abc', 'an unsynced cut into synced bytes is undone');
  disk.truncate('log', 1);
  disk.sync('log');
  disk.crash();
  t.is(text(disk.read('log')), 'a');
  t.throws(() => disk.truncate('log', 5), { instanceOf: RangeError });
  t.throws(() => disk.truncate('missing', 0), { message: /no such file/ });
});

test('rename replaces atomically: after a crash the target is all old or all new', (t) => {
  for (let seed = 1; seed <= 20; seed++) {
    const disk = new SimDisk(new SeededRng(seed));
    disk.write('state', bytes('old-state'));
    disk.sync();
    disk.write('state.tmp', bytes('new-state'));
    disk.sync('state.tmp');
    disk.rename('state.tmp', 'state');
    if (seed % 2 === 0) disk.sync('state');
    disk.crash({ tearUnsyncedOverwrites: true, tearUnsyncedAppends: true });
    t.is(text(disk.read('state')), seed % 2 === 0 ? 'new-state' : 'old-state');
  }
});

test('an in-place overwrite torn by a crash leaves the old content or a prefix of the new', (t) => {
  const outcomes = new Set<string>();
  for (let seed = 1; seed <= 60; seed++) {
    const disk = new SimDisk(new SeededRng(seed));
    disk.write('hard-state', bytes('term=1;vote=a'));
    disk.sync();
    disk.write('hard-state', bytes('term=2;vote=b'));
    disk.crash({ tearUnsyncedOverwrites: true });
    const survived = text(disk.read('hard-state'))!;
    t.true(survived === 'term=1;vote=a' || 'term=2;vote=b'.startsWith(survived), survived);
    outcomes.add(survived === 'term=1;vote=a' ? 'old' : survived.length === 13 ? 'new' : 'torn');
  }
  t.deepEqual([...outcomes].sort(), ['new', 'old', 'torn']);
});
