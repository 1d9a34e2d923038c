/**
 * A set of strings kept in ascending order of UTF-16 code units (JavaScript's `<`), so a prefix
 * listing is a binary search plus a walk, not a sort of every key on every call.
 */
export class SortedKeys {
  private readonly keys: string[] = [];

  get size(): number {
    return this.keys.length;
  }

  add(key: string): void {
    const at = this.lowerBound(key);
    if (this.keys[at] !== key) this.keys.splice(at, 0, key);
  }

  remove(key: string): void {
    const at = this.lowerBound(key);
    if (this.keys[at] === key) this.keys.splice(at, 1);
  }

  /** Keys that start with `prefix` and are strictly greater than `after`, in order, at most `limit`. */
  *range(prefix: string, after: string | undefined, limit: number): Generator<string> {
    let at = this.lowerBound(prefix);
    if (after !== undefined && after >= prefix) {
      at = this.lowerBound(after);
      if (this.keys[at] === after) at++;
    }
    for (let taken = 0; taken < limit && at < this.keys.length; at++, taken++) {
      const key = this.keys[at];
      if (!key.startsWith(prefix)) return;
      yield key;
    }
  }

  /** The index of the first key >= `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
