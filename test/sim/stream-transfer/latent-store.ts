import type { Clock } from '@baton/contracts/internal/clock.js';
import type { ObjectStore } from '@baton/contracts/internal/object-store.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

/**
 * One node's road to the shared object store: every call takes a few virtual milliseconds, its
 * effect landing at the end, so calls are in flight when faults strike (a pause that freezes
 * the node between its segment landing and its learning so is the zombie's classic race).
 */
export function latentStore(
  inner: ObjectStore,
  clock: Clock,
  rng: SeededRng,
  maxMs: number,
): ObjectStore {
  const travel = () => clock.sleep(rng.int(maxMs + 1));
  return {
    supports: inner.supports,
    put: async (key, bytes, options) => {
      await travel();
      return inner.put(key, bytes, options);
    },
    get: async (key) => {
      await travel();
      return inner.get(key);
    },
    head: async (key) => {
      await travel();
      return inner.head(key);
    },
    list: async (prefix, options) => {
      await travel();
      return inner.list(prefix, options);
    },
    delete: async (key) => {
      await travel();
      return inner.delete(key);
    },
  };
}
