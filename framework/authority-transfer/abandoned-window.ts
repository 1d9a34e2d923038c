/** What an abandoned transfer asked for: enough to tell a retry of it from another move under its key. */
export interface AbandonedRequest {
  source: string;
  target: string;
  reason: string;
}

/** What the window knows of an abandoned key. */
export interface AbandonedKey {
  authority: string;
  request?: AbandonedRequest;
  /** Why its registration was released, as the replicated release said (cancelled, expired, ...). */
  why?: string;
}

/**
 * The most recently abandoned transfers (cancelled or timed out), newest last, bounded. It is
 * what keeps a repeated cancel idempotent without keeping one plan per authority ever touched:
 * per authority its latest abandoned transfer (past `capacity` authorities, a cancel answers
 * 404). Apart from that, per key what it asked and why it ended, for up to `keyCapacity` keys,
 * so a key reissued for another move is refused even after a later transfer of the same
 * authority was abandoned (one key names one transfer, while the key is remembered).
 */
export class AbandonedWindow {
  /** Authority -> its latest abandoned transfer id. */
  private readonly entries = new Map<string, string>();
  /** Transfer id -> what it asked, newest last. */
  private readonly keys = new Map<string, AbandonedKey>();

  constructor(
    readonly capacity = 256,
    readonly keyCapacity = 4 * capacity,
  ) {
    if (!(capacity >= 0)) throw new RangeError(`abandoned window capacity must be >= 0, got ${capacity}`);
  }

  remember(authority: string, transferId: string, request?: AbandonedRequest, why?: string): void {
    this.entries.delete(authority);
    this.entries.set(authority, transferId);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    // What is known of the key already (from the member that ran it) is kept if not told again.
    const known = this.keys.get(transferId);
    const same = known?.authority === authority;
    const asked = request ? { source: request.source, target: request.target, reason: request.reason } : undefined;
    this.keys.delete(transferId);
    this.keys.set(transferId, { authority, request: asked ?? (same ? known.request : undefined), why: why ?? (same ? known.why : undefined) });
    while (this.keys.size > this.keyCapacity) this.keys.delete(this.keys.keys().next().value as string);
  }

  /** The id of the authority's latest abandoned transfer, if still in the window. */
  get(authority: string): string | undefined {
    return this.entries.get(authority);
  }

  /** What an abandoned transfer asked and why it ended, by its id, if still remembered. */
  lookup(transferId: string): AbandonedKey | undefined {
    const key = this.keys.get(transferId);
    return key && { ...key };
  }

  /** A move committed since: a repeated cancel answers for it, not for the abandoned transfer. */
  forget(authority: string): void {
    this.entries.delete(authority);
  }

  get size(): number {
    return this.entries.size;
  }
}
