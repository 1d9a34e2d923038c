/**
 * A bounded window of in-flight append messages to one follower, identified by the last index
 * each carried. Pipelining stops when it is full, so a slow follower costs a bounded amount.
 *
 * @internal
 */
export class Inflights {
  private readonly lasts: number[] = [];

  constructor(readonly capacity: number) {}

  add(last: number): void {
    this.lasts.push(last);
  }

  /** Frees every message whose last index the follower acknowledged. */
  freeLE(index: number): void {
    let n = 0;
    while (n < this.lasts.length && this.lasts[n] <= index) n++;
    if (n > 0) this.lasts.splice(0, n);
  }

  /** Frees the oldest slot: a heartbeat answer shows the follower is alive even if a batch was lost. */
  freeFirstOne(): void {
    this.lasts.shift();
  }

  full(): boolean {
    return this.lasts.length >= this.capacity;
  }

  count(): number {
    return this.lasts.length;
  }

  reset(): void {
    this.lasts.length = 0;
  }
}

/** @internal */
export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/**
 * The leader's view of one follower (etcd's tracker.Progress). In `probe` the leader sends one
 * append per heartbeat until it finds where the logs match; in `replicate` it streams batches
 * optimistically up to the inflight window; in `snapshot` it waits for an InstallSnapshot to land.
 *
 * @internal
 */
export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** In probe: an append is outstanding, wait for its answer or the next heartbeat answer. */
  probeSent = false;
  pendingSnapshot = 0;
  /** Leader tick at which the snapshot was sent, to resend it if it was lost. */
  snapshotSentAt = 0;
  /** Heard from since the last check-quorum round. */
  recentActive = false;
  readonly inflights: Inflights;

  constructor(next: number, maxInflight: number) {
    this.next = next;
    this.inflights = new Inflights(maxInflight);
  }

  becomeProbe(): void {
    if (this.state === 'snapshot') {
      const pending = this.pendingSnapshot;
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.next = this.match + 1;
    }
    this.state = 'probe';
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.inflights.reset();
  }

  becomeReplicate(): void {
    this.state = 'replicate';
    this.next = this.match + 1;
    this.probeSent = false;
    this.inflights.reset();
  }

  becomeSnapshot(index: number, tick: number): void {
    this.state = 'snapshot';
    this.pendingSnapshot = index;
    this.snapshotSentAt = tick;
    this.inflights.reset();
  }

  /** The follower acknowledged `index`; true when that is news. */
  maybeUpdate(index: number): boolean {
    let updated = false;
    if (this.match < index) {
      this.match = index;
      updated = true;
      this.probeSent = false;
    }
    this.next = Math.max(this.next, index + 1);
    return updated;
  }

  /**
   * The follower rejected an append after `rejected`; `hint` is the highest index where the logs
   * may agree. Returns false for a stale rejection (already superseded), which is ignored.
   */
  maybeDecrTo(rejected: number, hint: number): boolean {
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, hint + 1), this.match + 1, 1);
    this.probeSent = false;
    return true;
  }

  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }
}
