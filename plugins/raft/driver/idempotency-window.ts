import type { LogPosition } from '../../../framework/contracts/metadata-consensus.js';

/** The committed decision remembered for one idempotency key. */
export interface Decision<R> {
  fingerprint: string;
  position: LogPosition;
  result: R;
}

export type IdempotencyWindowSnapshot<R> = Array<[string, Decision<R>]>;

/**
 * Bounded map from idempotency key to the decision committed under it, oldest forgotten first.
 * It is replicated state: every member applies the same entries, so every member holds the same
 * window, and it travels in snapshots. A retry later than `capacity` keyed proposals is treated
 * as new, so the capacity must exceed any caller's retry horizon.
 */
export class IdempotencyWindow<R> {
  private readonly decisions = new Map<string, Decision<R>>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`idempotency window capacity must be a positive integer, got ${capacity}`);
    }
  }

  get size(): number {
    return this.decisions.size;
  }

  lookup(key: string): Decision<R> | undefined {
    return this.decisions.get(key);
  }

  remember(key: string, decision: Decision<R>): void {
    this.decisions.set(key, decision);
    while (this.decisions.size > this.capacity) {
      this.decisions.delete(this.decisions.keys().next().value as string);
    }
  }

  snapshot(): IdempotencyWindowSnapshot<R> {
    return structuredClone([...this.decisions.entries()]);
  }

  static restore<R>(capacity: number, entries: IdempotencyWindowSnapshot<R>): IdempotencyWindow<R> {
    const window = new IdempotencyWindow<R>(capacity);
    for (const [key, decision] of entries) window.remember(key, decision);
    return window;
  }
}
