/** What an abandoned transfer asked for: enough to tell a retry of it from another move under its key. */
export interface AbandonedRequest {
  source: string;
  target: string;
  reason: string;
}

interface Entry {
  id: string;
  request?: AbandonedRequest;
  /** Why its registration was released, as the replicated release said (cancelled, expired, ...). */
  why?: string;
}

/**
 * The most recently abandoned authorities (cancelled or timed out), newest last, bounded. It is
 * what keeps a repeated cancel idempotent without keeping one plan per authority ever touched:
 * past the window, a cancel answers 404. Each entry also keeps what its key asked, so the key
 * reissued for another move is refused while the entry lasts (one key names one transfer).
 */
export class AbandonedWindow {
  private readonly entries = new Map<string, Entry>();
  /** Transfer id -> authority, for the entries in the window. */
  private readonly byId = new Map<string, string>();

  constructor(readonly capacity = 256) {
    if (!(capacity >= 0)) throw new RangeError(`abandoned window capacity must be >= 0, got ${capacity}`);
  }

  remember(authority: string, transferId: string, request?: AbandonedRequest, why?: string): void {
    // What is known of the key already (from the member that ran it) is kept if not told again.
    const known = this.lookup(transferId);
    const same = known?.authority === authority;
    this.forget(authority);
    this.dropId(transferId);
    const asked = request ? { source: request.source, target: request.target, reason: request.reason } : undefined;
    this.entries.set(authority, {
      id: transferId,
      request: asked ?? (same ? known.request : undefined),
      why: why ?? (same ? known.why : undefined),
    });
    this.byId.set(transferId, authority);
    while (this.entries.size > this.capacity) this.forget(this.entries.keys().next().value as string);
  }

  /** The id of the authority's abandoned transfer, if still in the window. */
  get(authority: string): string | undefined {
    return this.entries.get(authority)?.id;
  }

  /** The authority and request of an abandoned transfer by its id, if still in the window. */
  lookup(transferId: string): { authority: string; request?: AbandonedRequest; why?: string } | undefined {
    const authority = this.byId.get(transferId);
    const entry = authority === undefined ? undefined : this.entries.get(authority);
    return entry && { authority: authority!, request: entry.request, why: entry.why };
  }

  forget(authority: string): void {
    const entry = this.entries.get(authority);
    if (!entry) return;
    this.entries.delete(authority);
    if (this.byId.get(entry.id) === authority) this.byId.delete(entry.id);
  }

  get size(): number {
    return this.entries.size;
  }

  private dropId(transferId: string): void {
    const authority = this.byId.get(transferId);
    if (authority !== undefined) this.forget(authority);
  }
}
