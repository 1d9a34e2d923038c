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

/**
 * Wider than the package's 32: a million records sit four levels deep instead of five, so a
 * lookup at that size visits one node (one more set of cache misses) fewer. Binary search keeps
 * the comparisons per lookup at about log2(n) whatever the width.
 */
const NODE_SIZE = 64;

/**
 * The order of keys of one primitive type (every tree here is keyed by id strings): the same
 * order as the package's default comparator gives them, without its checks for mixed types,
 * which every comparison of every lookup paid.
 */
export function compareKeys<K>(a: K, b: K): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortedTree<K, V>(compare: (a: K, b: K) => number = compareKeys): SortedTree<K, V> {
  // The package's typings omit the iterator its prototype has (equal to entries()).
  return new Tree<K, V>(undefined, compare, NODE_SIZE) as SortedTree<K, V>;
}

/** The package's nodes as `updateValue` walks them (not in its typings). */
interface TreeNode<K, V> {
  isShared?: boolean;
  readonly isLeaf: boolean;
  children?: TreeNode<K, V>[];
  indexOf(key: K, failXor: number, compare: (a: K, b: K) => number): number;
  reifyValues(): V[];
  clone(): TreeNode<K, V>;
}

/**
 * Replaces the value under an existing `key` by `change(current)` in one descent (a get then a
 * set walk the tree twice, and the package's set also tries to shift entries into a full
 * node's siblings, touching nodes an overwrite does not need). `change` returning undefined
 * leaves the value as it is. Returns the value put, or undefined when the key is absent or
 * nothing changed. Copy-on-write as the package's own set: a node shared with a clone is
 * copied before it is written, so a clone (a capture) never sees the change.
 */
export function updateValue<K, V>(tree: SortedTree<K, V>, key: K, change: (current: V) => V | undefined): V | undefined {
  const internals = tree as unknown as { _root: TreeNode<K, V>; _compare: (a: K, b: K) => number };
  const compare = internals._compare;
  let node = internals._root;
  if (node.isShared) internals._root = node = node.clone();
  while (!node.isLeaf) {
    const children = node.children!;
    const i = Math.min(node.indexOf(key, 0, compare), children.length - 1);
    let child = children[i];
    if (child.isShared) children[i] = child = child.clone();
    node = child;
  }
  const i = node.indexOf(key, -1, compare);
  if (i < 0) return undefined;
  const values = node.reifyValues();
  const next = change(values[i]);
  if (next !== undefined) values[i] = next;
  return next;
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
