import test from 'ava';
import {
  PreconditionFailedError,
  StoreUnavailableError,
  type ListOptions,
  type ListPage,
  type ObjectStore,
  type PutOptions,
} from '@baton/contracts/internal/object-store.js';
import { objectStoreSuite } from '@baton/conformance/internal/object-store-suite.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';
import { attemptPasses, collectSuite, findTest } from './collect-suite.js';

// Each store below breaks one rule of the contract; the suite must notice. A suite test that
// passes against a broken store could not have failed, and would protect nothing.

class IgnoresStartAfter extends MemoryObjectStore {
  override list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    return super.list(prefix, { ...options, startAfter: undefined });
  }
}

class SharesBuffers extends MemoryObjectStore {
  private readonly held = new Map<string, Uint8Array>();
  override async put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void> {
    await super.put(key, bytes, options);
    this.held.set(key, bytes);
  }
  override async get(key: string): Promise<Uint8Array | undefined> {
    return (await super.get(key)) && this.held.get(key);
  }
}

/** Orders by code point (what UTF-8 byte order gives), not by UTF-16 code unit. */
class CodePointOrder extends MemoryObjectStore {
  override async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const page = await super.list(prefix, options);
    const codePoints = (s: string) => [...s].map((c) => c.codePointAt(0)!);
    const compare = (a: string, b: string) => {
      const [x, y] = [codePoints(a), codePoints(b)];
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
      return x.length - y.length;
    };
    return { ...page, objects: [...page.objects].sort((a, b) => compare(a.key, b.key)) };
  }
}

/** Checks, then yields, then writes: two ifAbsent puts can both see "absent". */
class RacyIfAbsent extends MemoryObjectStore {
  override async put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void> {
    if (!options?.ifAbsent) return super.put(key, bytes, options);
    const exists = (await this.head(key)) !== undefined;
    await new Promise((resolve) => setImmediate(resolve));
    if (exists) throw new PreconditionFailedError(key);
    return super.put(key, bytes);
  }
}

class IfAbsentOverwrites extends MemoryObjectStore {
  override put(key: string, bytes: Uint8Array): Promise<void> {
    return super.put(key, bytes);
  }
}

class DeleteOfMissingFails extends MemoryObjectStore {
  override async delete(key: string): Promise<void> {
    if ((await this.head(key)) === undefined) throw new Error(`no such key ${key}`);
    return super.delete(key);
  }
}

class ClaimsNoConditionalPut extends MemoryObjectStore {
  override readonly supports = { conditionalPut: false };
}

/** Reads keep answering from memory while "down": a missing key reads as undefined. */
class ReadsThroughOutage extends MemoryObjectStore {
  down = false;
  override async get(key: string): Promise<Uint8Array | undefined> {
    if (this.down) return undefined;
    return super.get(key);
  }
}

const mutants: { store: () => ObjectStore & { failWith?: (e: Error | undefined) => void }; breaks: string }[] = [
  { store: () => new IgnoresStartAfter(), breaks: 'pagination with limit/next' },
  { store: () => new IgnoresStartAfter(), breaks: 'startAfter skips keys' },
  { store: () => new SharesBuffers(), breaks: 'bytes are copied' },
  { store: () => new CodePointOrder(), breaks: 'UTF-16 code units' },
  { store: () => new RacyIfAbsent(), breaks: 'concurrent ifAbsent puts' },
  { store: () => new IfAbsentOverwrites(), breaks: 'put with ifAbsent creates once' },
  { store: () => new DeleteOfMissingFails(), breaks: 'deleting a missing key succeeds' },
  { store: () => new ClaimsNoConditionalPut(), breaks: 'supports.conditionalPut is true' },
];

for (const { store, breaks } of mutants) {
  test(`objectStoreSuite › fails a store that breaks "${breaks}" (${store().constructor.name})`, async (t) => {
    const tests = collectSuite((suiteTest) =>
      objectStoreSuite({
        test: suiteTest,
        name: 'broken',
        supports: { conditionalPut: true },
        factory: () => ({ store: store() }),
      }),
    );
    t.false(await attemptPasses(t, findTest(tests, breaks)));
  });
}

test('objectStoreSuite › fails a store whose reads answer undefined during an outage', async (t) => {
  const tests = collectSuite((suiteTest) =>
    objectStoreSuite({
      test: suiteTest,
      name: 'broken',
      factory: () => {
        const store = new ReadsThroughOutage();
        const outage = new StoreUnavailableError('broken', 'down');
        return {
          store,
          makeUnavailable: () => {
            store.down = true;
            store.failWith(outage);
          },
          restore: () => {
            store.down = false;
            store.failWith(undefined);
          },
        };
      },
    }),
  );
  t.false(await attemptPasses(t, findTest(tests, 'while unavailable')));
});

test('objectStoreSuite › passes the reference store on every test (the harness works)', async (t) => {
  const tests = collectSuite((suiteTest) =>
    objectStoreSuite({ test: suiteTest, name: 'reference', factory: () => ({ store: new MemoryObjectStore() }) }),
  );
  t.true(tests.length >= 20, `collected ${tests.length} tests`);
  for (const collected of tests) t.true(await attemptPasses(t, collected), collected.title);
});

test('objectStoreSuite › prefixes every title with the name', (t) => {
  const tests = collectSuite((suiteTest) =>
    objectStoreSuite({ test: suiteTest, name: 'named', factory: () => ({ store: new MemoryObjectStore() }) }),
  );
  t.true(tests.every((c) => c.title.startsWith('named › ')));
  t.is(new Set(tests.map((c) => c.title)).size, tests.length, 'titles are unique');
});
