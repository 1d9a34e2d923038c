import sortedBtree from 'sorted-btree';

/**
 * An ordered map with O(log n) get/set/delete, ordered iteration from any key, and an O(1)
 * copy-on-write clone (a B+ tree). What both variants' replicated records and indexes are built
 * on: lookups by any string (no prototype in the way), listing after a cursor, and cheap frozen
 * copies for snapshots. Iterating it yields [key, value] entries, as a Map does.
 */
export type SortedTree<K, V> = InstanceType<typeof sortedBtree.default<K, V>> & Iterable<[K, V]>;

// The package is CommonJS with the class on `exports.default`.
const Tree = sortedBtree.default;

export function sortedTree<K, V>(compare?: (a: K, b: K) => number): SortedTree<K, V> {
  // The package's typings omit the iterator its prototype has (equal to entries()).
  return new Tree<K, V>(undefined, compare) as SortedTree<K, V>;
}

/** Values with keys strictly after `after` (from the first key when it is undefined), in key order. */
export function* valuesAfter<K, V>(tree: SortedTree<K, V>, after?: K): IterableIterator<V> {
  let key = after === undefined ? tree.minKey() : tree.nextHigherKey(after);
  while (key !== undefined) {
    yield tree.get(key) as V;
    key = tree.nextHigherKey(key);
  }
}

/** Keys strictly after `after`, in order. */
export function* keysAfter<K, V>(tree: SortedTree<K, V>, after?: K): IterableIterator<K> {
  let key = after === undefined ? tree.minKey() : tree.nextHigherKey(after);
  while (key !== undefined) {
    yield key;
    key = tree.nextHigherKey(key);
  }
}
