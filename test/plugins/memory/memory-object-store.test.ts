import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/object-store.js';
import { objectStoreSuite } from '@baton/conformance/internal/object-store-suite.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';

objectStoreSuite({
  test,
  name: 'memory object store',
  supports: { conditionalPut: true },
  factory: () => {
    const store = new MemoryObjectStore();
    return {
      store,
      makeUnavailable: () => store.failWith(new StoreUnavailableError('memory object store', 'taken down by the test')),
      restore: () => store.failWith(undefined),
    };
  },
});

test('memory object store › failWith raises the very error it was given', async (t) => {
  const store = new MemoryObjectStore();
  const outage = new StoreUnavailableError('memory object store', 'disk on fire');
  store.failWith(outage);
  const error = await t.throwsAsync(store.get('k'));
  t.is(error, outage);
});

test('memory object store › a list limit that is not a positive integer is refused', async (t) => {
  const store = new MemoryObjectStore();
  for (const limit of [0, -1, 1.5, Number.NaN]) {
    await t.throwsAsync(store.list('', { limit }), { instanceOf: RangeError, message: /positive integer/ });
  }
});

test('memory object store › put refuses bytes that are not a Uint8Array', async (t) => {
  const store = new MemoryObjectStore();
  await t.throwsAsync(store.put('k', 'text' as unknown as Uint8Array), { instanceOf: TypeError, message: /Uint8Array/ });
  t.is(await store.get('k'), undefined);
});
