import { type Bitset, isSubset, sameWords } from './bitset.js';
import type { StateIdentity } from './state-identity.js';

interface Seen<S> {
  returned: Uint32Array;
  state: S;
  /** The sets of unknown-outcome operations applied, none a subset of another. */
  applied: Uint32Array[];
}

/**
 * Lowe's memoisation, as in Porcupine: the search configurations already explored, each the set
 * of returned operations linearized and the model state reached. A configuration seen before
 * failed already (or is still being explored by the same search frame), so it is not explored
 * again: that is what turns the factorial search into one bounded by the distinct
 * configurations.
 *
 * Unknown-outcome operations need never take effect, so they are kept out of the set and
 * compared by inclusion instead: with the same returned operations and the same state, a
 * configuration that applied fewer of them can do all the other can (the extra ones may simply
 * never happen), so once it is seen the other is not worth exploring.
 */
export class Visited<S> {
  private readonly seen = new Map<string, Array<Seen<S>>>();

  constructor(private readonly identity: StateIdentity<S>) {}

  /** Records a configuration; false if it, or one that dominates it, was seen already. */
  firstVisit(returned: Bitset, applied: Uint32Array, state: S): boolean {
    const key = this.identity.key
      ? `${returned.hash()}|${this.identity.key(state)}`
      : returned.hash();
    let bucket = this.seen.get(key);
    if (!bucket) this.seen.set(key, (bucket = []));
    // With a state key in the map key, equal keys mean equal states; else ask the model.
    const entry = bucket.find(
      (e) =>
        sameWords(e.returned, returned.words) &&
        (this.identity.key !== undefined || this.identity.same(e.state, state)),
    );
    if (!entry) {
      bucket.push({ returned: returned.copy(), state, applied: [applied] });
      return true;
    }
    if (entry.applied.some((earlier) => isSubset(earlier, applied))) return false;
    // The new set dominates those it is a subset of: they need no comparing any more.
    entry.applied = entry.applied.filter((earlier) => !isSubset(applied, earlier));
    entry.applied.push(applied);
    return true;
  }
}
