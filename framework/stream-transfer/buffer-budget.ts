/**
 * The record bytes a node's sessions hold accepted but not yet durable, against one bound for
 * the whole node: a bound per stream would let a client spread a flood over many streams and
 * hold that many buffers at once.
 */
export class BufferBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes held now. */
  get held(): number {
    return this.used;
  }

  /**
   * Takes `bytes` when they fit. When nothing is held a batch is always taken, however large
   * (its size is bounded by the append request's own limit), so a node never refuses forever.
   */
  tryTake(bytes: number): boolean {
    if (this.used > 0 && this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}
