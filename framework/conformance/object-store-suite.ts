import type { ExecutionContext, TestFn } from 'ava';
import {
  InvalidKeyError,
  PreconditionFailedError,
  StoreUnavailableError,
  UnsupportedOperationError,
  type ObjectStore,
} from '@baton/contracts';

/** One isolated, empty store, made fresh for each test of the suite. */
export interface ObjectStoreFixture {
  store: ObjectStore;
  /** Releases what the store holds (temp dir, bucket...). Runs after the test. */
  cleanup?: () => Promise<void> | void;
  /** Takes the store down so that every operation raises StoreUnavailableError. */
  makeUnavailable?: () => Promise<void> | void;
  /** Brings the store back after makeUnavailable, with the data it held before. */
  restore?: () => Promise<void> | void;
}

export interface ObjectStoreSuiteOptions {
  /** ava's `test` function of the calling test file. */
  test: TestFn;
  /** Prefixes every test title, so several implementations can run in one process. */
  name: string;
  factory: () => Promise<ObjectStoreFixture> | ObjectStoreFixture;
  /**
   * The capabilities the implementation claims. When given, the suite also checks that the
   * store's own `supports` says the same; when omitted, the store's `supports` is taken.
   */
  supports?: { conditionalPut?: boolean };
}

/**
 * The conformance suite of the ObjectStore contract (framework/contracts/object-store.ts):
 * every implementation runs it, in the manner of abstract-level's shared suite, then adds the
 * tests that only make sense for itself.
 */
export function objectStoreSuite(options: ObjectStoreSuiteOptions): void {
  const { test, name, factory } = options;
  const title = (what: string) => `${name} › ${what}`;

  const open = async (t: ExecutionContext): Promise<ObjectStoreFixture> => {
    const fixture = await factory();
    if (fixture.cleanup) t.teardown(fixture.cleanup);
    return fixture;
  };
  const openStore = async (t: ExecutionContext): Promise<ObjectStore> => (await open(t)).store;

  test(title('put then get returns the same bytes, head the key and size'), async (t) => {
    const store = await openStore(t);
    await store.put('greeting', utf8('hello, world'));
    const got = await store.get('greeting');
    t.true(got instanceof Uint8Array, 'get returns a Uint8Array');
    t.is(text(got), 'hello, world');
    t.deepEqual(await store.head('greeting'), { key: 'greeting', size: 12 });
  });

  test(title('an empty body round-trips and has size 0'), async (t) => {
    const store = await openStore(t);
    await store.put('empty', new Uint8Array(0));
    const got = await store.get('empty');
    t.true(got instanceof Uint8Array, 'an empty object is present, not undefined');
    t.is(got!.byteLength, 0);
    t.deepEqual(await store.head('empty'), { key: 'empty', size: 0 });
    t.deepEqual(await keysOf(store, ''), ['empty']);
  });

  test(title('a large body (8 MiB) round-trips exactly'), async (t) => {
    const store = await openStore(t);
    const body = patternBytes(8 * 1024 * 1024, 0x5eed);
    await store.put('segments/large', body);
    assertSameBytes(t, await store.get('segments/large'), body);
    t.deepEqual(await store.head('segments/large'), { key: 'segments/large', size: body.byteLength });
  });

  test(title('every byte value round-trips exactly'), async (t) => {
    const store = await openStore(t);
    const body = new Uint8Array(512);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) % 256;
    await store.put('binary', body);
    assertSameBytes(t, await store.get('binary'), body);
  });

  test(title('bytes are copied: mutating the caller buffer changes nothing stored'), async (t) => {
    const store = await openStore(t);
    const body = utf8('original');
    await store.put('copied', body);
    body.fill(0x21);
    t.is(text(await store.get('copied')), 'original', 'the put buffer was mutated after put');
    const first = await store.get('copied');
    first!.fill(0x3f);
    t.is(text(await store.get('copied')), 'original', 'a buffer returned by get was mutated');
  });

  test(title('a view into a larger buffer stores only the viewed bytes'), async (t) => {
    const store = await openStore(t);
    const backing = utf8('xxxxINSIDExxxx');
    await store.put('view', backing.subarray(4, 10));
    t.is(text(await store.get('view')), 'INSIDE');
    t.deepEqual(await store.head('view'), { key: 'view', size: 6 });
  });

  test(title('keys with slashes, unicode and spaces are stored and listed as given'), async (t) => {
    const store = await openStore(t);
    const keys = [
      'plain',
      'a/b/c/d.bin',
      'with space/and more spaces.txt',
      'ünïcødé/日本語/キー',
      'emoji/😀/🚀.dat',
      'symbols/!#$%&\'()*+,;=@[]^`{}~',
      'percent/%2F/%00/%zz',
      'dots/.hidden/file.',
      'trailing/',
      'double//slash',
      'back\\slash',
      'UPPER/Case',
      'upper/case',
      'tab\tand\nnewline',
    ];
    for (const [i, key] of keys.entries()) await store.put(key, utf8(`value ${i}`));
    for (const [i, key] of keys.entries()) {
      t.is(text(await store.get(key)), `value ${i}`, `get(${JSON.stringify(key)})`);
      t.deepEqual(await store.head(key), { key, size: utf8(`value ${i}`).byteLength });
    }
    t.deepEqual(await keysOf(store, ''), [...keys].sort(byCodeUnits));
  });

  test(title('a key and keys it is a prefix of coexist'), async (t) => {
    const store = await openStore(t);
    const keys = ['a', 'a/b', 'a/b/c', 'a.b', 'a-b', 'a0', 'ab', 'a/', 'a/b/'];
    for (const key of keys) await store.put(key, utf8(key));
    for (const key of keys) t.is(text(await store.get(key)), key);
    t.deepEqual(await keysOf(store, 'a'), [...keys].sort(byCodeUnits));
    await store.delete('a/b');
    t.is(await store.get('a/b'), undefined);
    t.is(text(await store.get('a/b/c')), 'a/b/c', 'deleting a/b left a/b/c');
    t.is(text(await store.get('a')), 'a', 'deleting a/b left a');
  });

  test(title('get and head of a missing key answer undefined'), async (t) => {
    const store = await openStore(t);
    t.is(await store.get('missing'), undefined);
    t.is(await store.head('missing'), undefined);
    await store.put('dir/present', utf8('x'));
    t.is(await store.get('dir/absent'), undefined, 'a sibling of an existing key');
    t.is(await store.get('dir'), undefined, 'a prefix of an existing key is not itself a key');
    t.is(await store.head('dir'), undefined);
    t.is(await store.get('dir/present/below'), undefined, 'a key below an existing key');
  });

  test(title('delete removes the key; deleting a missing key succeeds'), async (t) => {
    const store = await openStore(t);
    await t.notThrowsAsync(store.delete('never-existed'));
    await t.notThrowsAsync(store.delete('no/such/dir/key'));
    await store.put('doomed/one', utf8('1'));
    await store.put('doomed/two', utf8('2'));
    await store.delete('doomed/one');
    t.is(await store.get('doomed/one'), undefined);
    t.is(await store.head('doomed/one'), undefined);
    t.deepEqual(await keysOf(store, 'doomed/'), ['doomed/two']);
    await t.notThrowsAsync(store.delete('doomed/one'), 'deleting twice succeeds');
    await store.delete('doomed/two');
    t.deepEqual(await keysOf(store, ''), []);
    await store.put('doomed/one', utf8('again'));
    t.is(text(await store.get('doomed/one')), 'again', 'a deleted key can be written again');
  });

  test(title('put overwrites an existing key, growing and shrinking it'), async (t) => {
    const store = await openStore(t);
    await store.put('k', utf8('short'));
    await store.put('k', utf8('a much longer value'));
    t.is(text(await store.get('k')), 'a much longer value');
    t.deepEqual(await store.head('k'), { key: 'k', size: 19 });
    await store.put('k', utf8('s'));
    t.is(text(await store.get('k')), 's');
    t.deepEqual(await store.head('k'), { key: 'k', size: 1 });
    t.deepEqual(await keysOf(store, ''), ['k'], 'overwrite keeps a single key');
  });

  test(title('the empty key is refused with InvalidKeyError'), async (t) => {
    const store = await openStore(t);
    await t.throwsAsync(store.put('', utf8('x')), { instanceOf: InvalidKeyError });
    await t.throwsAsync(store.get(''), { instanceOf: InvalidKeyError });
    await t.throwsAsync(store.head(''), { instanceOf: InvalidKeyError });
    await t.throwsAsync(store.delete(''), { instanceOf: InvalidKeyError });
    t.deepEqual(await keysOf(store, ''), []);
  });

  test(title('list returns the keys under a prefix, ascending, with their sizes'), async (t) => {
    const store = await openStore(t);
    const inside = ['logs/2024-01', 'logs/2024/02/x', 'logs/2024', 'logs/2024.old', 'logs/20240'];
    const outside = ['logs/2025', 'log', 'logs', 'other/logs/2024', 'logs/202'];
    for (const key of [...outside, ...inside].reverse()) await store.put(key, utf8(`#${key}`));
    const page = await store.list('logs/2024');
    t.deepEqual(
      page.objects,
      [...inside].sort(byCodeUnits).map((key) => ({ key, size: utf8(`#${key}`).byteLength })),
    );
    t.is(page.next, undefined, 'everything fit in one page');
    t.deepEqual(await keysOf(store, ''), [...inside, ...outside].sort(byCodeUnits), 'the empty prefix lists all');
  });

  test(title('list orders keys by UTF-16 code units, as JavaScript compares strings'), async (t) => {
    const store = await openStore(t);
    // Code point (and UTF-8 byte) order puts U+FFFF before U+1F600; UTF-16 order puts it after,
    // because the emoji's high surrogate (0xD83D) is smaller than 0xFFFF.
    const keys = ['z\uFFFF', 'z😀', 'z\uE000', 'zé', 'z~', 'zZ', 'z ', 'z!', 'z/', 'z.', 'z'];
    for (const key of keys) await store.put(key, utf8('x'));
    const expected = [...keys].sort(byCodeUnits);
    t.deepEqual(await keysOf(store, 'z'), expected);
    t.deepEqual(await keysOfPaged(store, 'z', 2), expected, 'the same order across pages');
  });

  test(title('list of a prefix that matches nothing is empty, without next'), async (t) => {
    const store = await openStore(t);
    t.deepEqual(await store.list(''), { objects: [] }, 'an empty store');
    await store.put('present/key', utf8('x'));
    for (const prefix of ['absent', 'present/key/', 'present/kez', 'presentkey', 'Present']) {
      const page = await store.list(prefix);
      t.deepEqual(page.objects, [], `prefix ${JSON.stringify(prefix)}`);
      t.is(page.next, undefined, `prefix ${JSON.stringify(prefix)}`);
    }
  });

  test(title('pagination with limit/next walks every key once, in order'), async (t) => {
    const store = await openStore(t);
    const keys: string[] = [];
    for (let i = 0; i < 23; i++) keys.push(`p/${String((i * 17) % 23).padStart(2, '0')}`);
    keys.push('p/05/nested', 'p/05/nested/deeper', 'p/10-', 'p/10/');
    for (const key of keys) await store.put(key, utf8(key));
    await store.put('q/outside', utf8('x'));
    const expected = [...keys].sort(byCodeUnits);
    for (const limit of [1, 2, 5, 7, keys.length, keys.length + 1]) {
      const seen: string[] = [];
      let startAfter: string | undefined;
      for (let pages = 0; ; pages++) {
        if (pages > keys.length + 1) {
          t.fail(`limit ${limit}: pagination does not end (keys so far: ${seen.length})`);
          return;
        }
        const page = await store.list('p/', { startAfter, limit });
        t.true(page.objects.length <= limit, `limit ${limit}: a page holds at most limit keys`);
        seen.push(...page.objects.map((o) => o.key));
        if (page.next === undefined) break;
        t.is(typeof page.next, 'string', `limit ${limit}: next is a key to start after`);
        startAfter = page.next;
      }
      t.deepEqual(seen, expected, `limit ${limit}: no duplicates, no gaps`);
    }
  });

  test(title('startAfter skips keys up to and including it, present or not'), async (t) => {
    const store = await openStore(t);
    for (const key of ['s/a', 's/b', 's/b/c', 's/c', 's/d']) await store.put(key, utf8(key));
    t.deepEqual(keys(await store.list('s/', { startAfter: 's/b' })), ['s/b/c', 's/c', 's/d']);
    t.deepEqual(keys(await store.list('s/', { startAfter: 's/bb' })), ['s/c', 's/d'], 'absent startAfter');
    t.deepEqual(keys(await store.list('s/', { startAfter: 's/' })), ['s/a', 's/b', 's/b/c', 's/c', 's/d']);
    t.deepEqual(keys(await store.list('s/', { startAfter: 'a' })), ['s/a', 's/b', 's/b/c', 's/c', 's/d'], 'before the prefix');
    t.deepEqual(await store.list('s/', { startAfter: 's/d' }), { objects: [] }, 'after the last key');
    t.deepEqual(await store.list('s/', { startAfter: 't' }), { objects: [] }, 'after the prefix');
    t.deepEqual(keys(await store.list('s/', { startAfter: 's/a', limit: 2 })), ['s/b', 's/b/c']);
  });

  test(title('concurrent puts of many keys under one prefix are all listed'), async (t) => {
    const store = await openStore(t);
    const keys = Array.from({ length: 40 }, (_, i) => `burst/${i % 4}/${i}`);
    await Promise.all(keys.map((key) => store.put(key, utf8(key))));
    t.deepEqual(await keysOf(store, 'burst/'), [...keys].sort(byCodeUnits));
  });

  test(title('puts and deletes racing under one prefix leave exactly the last writes'), async (t) => {
    const store = await openStore(t);
    for (let round = 0; round < 15; round++) {
      await store.put(`race/${round}/a`, utf8('a'));
      await Promise.all([store.delete(`race/${round}/a`), store.put(`race/${round}/b`, utf8('b'))]);
    }
    const expected = Array.from({ length: 15 }, (_, round) => `race/${round}/b`).sort(byCodeUnits);
    t.deepEqual(await keysOf(store, 'race/'), expected);
    t.is(text(await store.get('race/7/b')), 'b');
  });

  const declared = options.supports?.conditionalPut;
  if (declared !== undefined) {
    test(title(`supports.conditionalPut is ${declared}`), async (t) => {
      const store = await openStore(t);
      t.is(store.supports.conditionalPut, declared);
    });
  }

  test(title('put with ifAbsent creates once, then fails or is refused as supports says'), async (t) => {
    const store = await openStore(t);
    if (!(declared ?? store.supports.conditionalPut)) {
      await t.throwsAsync(store.put('once', utf8('first'), { ifAbsent: true }), {
        instanceOf: UnsupportedOperationError,
      });
      t.is(await store.get('once'), undefined, 'a refused ifAbsent stored nothing');
      return;
    }
    await store.put('once', utf8('first'), { ifAbsent: true });
    t.is(text(await store.get('once')), 'first');
    const error = await t.throwsAsync(store.put('once', utf8('second'), { ifAbsent: true }), {
      instanceOf: PreconditionFailedError,
    });
    t.is(error?.key, 'once', 'the error names the key');
    t.is(text(await store.get('once')), 'first', 'a failed ifAbsent wrote nothing');
    await store.put('once', utf8('plain overwrite'), { ifAbsent: false });
    t.is(text(await store.get('once')), 'plain overwrite', 'ifAbsent: false overwrites');
    await store.delete('once');
    await store.put('once', utf8('after delete'), { ifAbsent: true });
    t.is(text(await store.get('once')), 'after delete', 'ifAbsent succeeds again after a delete');
    await store.put('once/below', utf8('nested'), { ifAbsent: true });
    t.is(text(await store.get('once/below')), 'nested', 'a key under an existing key is absent');
  });

  if (declared ?? true) {
    test(title('concurrent ifAbsent puts of one key: exactly one wins'), async (t) => {
      const store = await openStore(t);
      if (!store.supports.conditionalPut) {
        await t.throwsAsync(store.put('contended', utf8('x'), { ifAbsent: true }), {
          instanceOf: UnsupportedOperationError,
        });
        return;
      }
      const contenders = Array.from({ length: 12 }, (_, i) => `contender ${i}`);
      const results = await Promise.allSettled(
        contenders.map((body) => store.put('contended', utf8(body), { ifAbsent: true })),
      );
      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [contenders[i]] : []));
      t.is(winners.length, 1, 'exactly one ifAbsent put succeeds');
      for (const r of results) {
        if (r.status === 'rejected') t.true(r.reason instanceof PreconditionFailedError, String(r.reason));
      }
      t.is(text(await store.get('contended')), winners[0], 'the stored body is the winner');
    });
  }

  test(title('while unavailable every operation raises StoreUnavailableError, then recovers'), async (t) => {
    const fixture = await open(t);
    const { store, makeUnavailable, restore } = fixture;
    if (!makeUnavailable || !restore) {
      // The factory cannot take this store down: the check is left to the store's own tests.
      t.log(`${name}: the factory offers no makeUnavailable/restore, so outages are not checked here`);
      t.is(makeUnavailable, undefined, 'makeUnavailable without restore');
      t.is(restore, undefined, 'restore without makeUnavailable');
      return;
    }
    await store.put('kept/before', utf8('kept'));
    await makeUnavailable();
    const down = { instanceOf: StoreUnavailableError };
    await t.throwsAsync(store.put('kept/during', utf8('x')), down, 'put');
    await t.throwsAsync(store.get('kept/before'), down, 'get');
    await t.throwsAsync(store.head('kept/before'), down, 'head');
    await t.throwsAsync(store.get('kept/missing'), down, 'get of a missing key must not answer undefined');
    await t.throwsAsync(store.list('kept/'), down, 'list');
    await t.throwsAsync(store.delete('kept/before'), down, 'delete');
    if (store.supports.conditionalPut) {
      await t.throwsAsync(store.put('kept/cond', utf8('x'), { ifAbsent: true }), down, 'ifAbsent put');
    }
    await restore();
    t.is(text(await store.get('kept/before')), 'kept', 'data survived the outage');
    t.is(await store.get('kept/during'), undefined, 'a failed put stored nothing visible');
    await store.put('kept/after', utf8('after'));
    t.deepEqual(await keysOf(store, 'kept/'), ['kept/after', 'kept/before']);
  });
}

/** Every key under a prefix, by a single unbounded-enough list call. */
async function keysOf(store: ObjectStore, prefix: string): Promise<string[]> {
  const page = await store.list(prefix, { limit: 10_000 });
  return keys(page);
}

/** Every key under a prefix, following `next` with small pages. */
async function keysOfPaged(store: ObjectStore, prefix: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  do {
    const page = await store.list(prefix, { startAfter, limit });
    out.push(...keys(page));
    if (page.next !== undefined && page.next === startAfter) {
      throw new Error(`list(${JSON.stringify(prefix)}) returned next ${JSON.stringify(page.next)} again: pagination does not advance`);
    }
    startAfter = page.next;
  } while (startAfter !== undefined);
  return out;
}

function keys(page: { objects: { key: string }[] }): string[] {
  return page.objects.map((o) => o.key);
}

/** The contract's order: plain `<` on JavaScript strings (UTF-16 code units). */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

function text(bytes: Uint8Array | undefined): string | undefined {
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}

/** Deterministic bytes that are not a repeating short pattern (xorshift32). */
function patternBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** Compares bytes without building a huge diff (deepEqual on 8 MiB is slow and unreadable). */
function assertSameBytes(t: ExecutionContext, actual: Uint8Array | undefined, expected: Uint8Array): void {
  if (!(actual instanceof Uint8Array)) {
    t.fail(`expected ${expected.byteLength} bytes, got ${String(actual)}`);
    return;
  }
  t.is(actual.byteLength, expected.byteLength, 'length');
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const e = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  let firstDifference = -1;
  if (!a.equals(e)) {
    firstDifference = 0;
    while (firstDifference < a.length && a[firstDifference] === e[firstDifference]) firstDifference++;
  }
  t.is(firstDifference, -1, `bytes differ, first at offset ${firstDifference}`);
}
