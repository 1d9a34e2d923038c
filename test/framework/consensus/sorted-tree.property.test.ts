import test from 'ava';
import fc from 'fast-check';
import { compareKeys, sortedTree, updateValue, type SortedTree } from '@baton/consensus/internal/sorted-tree.js';

// Enough keys for a tree three levels deep (nodes hold up to 64), so updates walk internal nodes
// shared with clones, not only a root leaf.
const KEYS = Array.from({ length: 6_000 }, (_, i) => `k-${i}`);

type Op =
  | { kind: 'update'; key: number; value: number; keep: boolean }
  | { kind: 'set'; key: number; value: number }
  | { kind: 'delete'; key: number }
  | { kind: 'clone' };

const key = fc.nat({ max: KEYS.length + 10 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('update' as const), key, value: fc.integer(), keep: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('set' as const), key, value: fc.integer() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), key }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clone' as const }) },
);

const keyOf = (i: number) => (i < KEYS.length ? KEYS[i] : `absent-${i}`);

test('updateValue changes only the live tree: every clone keeps what it held, and the live tree matches a Map given the same changes', (t) => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const tree: SortedTree<string, number> = sortedTree();
      const model = new Map<string, number>();
      for (const [i, k] of KEYS.entries()) {
        tree.set(k, i);
        model.set(k, i);
      }
      const clones: { tree: SortedTree<string, number>; model: Map<string, number> }[] = [];
      for (const o of ops) {
        const k = o.kind === 'clone' ? '' : keyOf(o.key);
        if (o.kind === 'update') {
          const before = model.get(k);
          const put = updateValue(tree, k, (current) => {
            if (current !== before) throw new Error(`update of ${k} saw ${current}, the model has ${before}`);
            return o.keep ? undefined : o.value;
          });
          if (before === undefined || o.keep) {
            if (put !== undefined) return false;
          } else {
            if (put !== o.value) return false;
            model.set(k, o.value);
          }
        } else if (o.kind === 'set') {
          tree.set(k, o.value);
          model.set(k, o.value);
        } else if (o.kind === 'delete') {
          tree.delete(k);
          model.delete(k);
        } else {
          clones.push({ tree: tree.clone() as SortedTree<string, number>, model: new Map(model) });
        }
      }
      const same = (a: SortedTree<string, number>, m: Map<string, number>) =>
        a.size === m.size && [...a].every(([k, v]) => m.get(k) === v) && [...m.keys()].sort(compareKeys).join() === a.keysArray().join();
      return same(tree, model) && clones.every((c) => same(c.tree, c.model));
    }),
    { numRuns: 60 },
  );
  t.pass('the property held over every run (fc.assert throws otherwise)');
});

test('compareKeys orders strings as the default comparator of the package did, so stored orders are unchanged', (t) => {
  const ids = ['b', 'a', 'A', '__proto__', 'constructor', 'authority-10', 'authority-2', 'é', '', 'z9'];
  t.deepEqual([...ids].sort(compareKeys), [...ids].sort());
  t.is(compareKeys('x', 'x'), 0);
});
