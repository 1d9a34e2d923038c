import type { LogPosition } from '@baton/contracts';

/** The committed decision remembered for one idempotency key. */
export interface RememberedDecision<R> {
  fingerprint: string;
  position: LogPosition;
  result: R;
}

/** The JSON form of a window, as carried in a snapshot (oldest first). */
export type IdempotencyWindowSnapshot<R> = Array<[string, RememberedDecision<R>]>;

/**
 * The bounded map from idempotency key to the decision committed under it. It is part of the
 * replicated state (and of snapshots), so a retry finds the decision wherever it lands. When
 * full, the oldest key is forgotten: a retry that comes later than `capacity` keyed proposals
 * is treated as new, which is why the capacity should dwarf any caller's retry horizon.
 */
export class IdempotencyWindow<R> {
  private readonly decisions = new Map<string, RememberedDecision<R>>();
  /**
   * Keys oldest first (from `head`), to find the oldest without iterating the map: a map's
   * iterator walks over the slots of every key deleted since its last rehash, which made each
   * eviction cost up to `capacity` steps.
   */
  private order: string[] = [];
  private head = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `idempotency window capacity must be a positive integer, got ${capacity}`,
      );
    }
  }

  get size(): number {
    return this.decisions.size;
  }

  lookup(key: string): RememberedDecision<R> | undefined {
    return this.decisions.get(key);
  }

  remember(key: string, decision: RememberedDecision<R>): void {
    // A key remembered again keeps its place, as in the map.
    if (!this.decisions.has(key)) this.order.push(key);
    this.decisions.set(key, decision);
    while (this.decisions.size > this.capacity) this.decisions.delete(this.order[this.head++]);
    if (this.head > this.capacity) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * The remembered decisions, oldest first. A decision is never changed once remembered, so
   * this copies references, not results: O(size) pointer copies, however large the results.
   */
  snapshot(): IdempotencyWindowSnapshot<R> {
    const out: IdempotencyWindowSnapshot<R> = [];
    for (let i = this.head; i < this.order.length; i++) {
      const key = this.order[i];
      const d = this.decisions.get(key);
      if (d) out.push([key, d]);
    }
    return out;
  }

  /** A window holding `entries` (oldest first); it keeps the decisions as given, never changing them. */
  static restore<R>(capacity: number, entries: IdempotencyWindowSnapshot<R>): IdempotencyWindow<R> {
    const window = new IdempotencyWindow<R>(capacity);
    for (const [key, decision] of entries) window.remember(key, decision);
    return window;
  }
}
