/**
 * The most recently abandoned authorities (cancelled or timed out), newest last, bounded. It is
 * what keeps a repeated cancel idempotent without keeping one plan per authority ever touched:
 * past the window, a cancel answers 404.
 */
export class AbandonedWindow {
  private readonly entries = new Map<string, string>();

  constructor(readonly capacity = 256) {
    if (!(capacity >= 0)) throw new RangeError(`abandoned window capacity must be >= 0, got ${capacity}`);
  }

  remember(authority: string, transferId: string): void {
    this.entries.delete(authority);
    this.entries.set(authority, transferId);
    while (this.entries.size > this.capacity) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }

  /** The id of the authority's abandoned transfer, if still in the window. */
  get(authority: string): string | undefined {
    return this.entries.get(authority);
  }

  forget(authority: string): void {
    this.entries.delete(authority);
  }

  get size(): number {
    return this.entries.size;
  }
}
