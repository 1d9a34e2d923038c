import type { Clock, Timer, Logger, ObjectStore } from '@baton/contracts';
import type { NodeId } from './model.js';
import type { StreamConsensus } from './stream-node.js';

/**
 * A node's lease renewals live in the object store, one small object per renewal under
 * `liveness/{node}/`, named `{boot}.{renewal}`: a name never seen before is a renewal. The
 * metadata leader lists the prefix once per round (one call for a thousand nodes) instead of
 * every node proposing a consensus command per second. The previous renewal is deleted after
 * each new one, so the listing holds about one object per node.
 */
export const LEASE_PREFIX = 'liveness/';

export function leasePrefix(node: NodeId): string {
  return `${LEASE_PREFIX}${node}/`;
}

/** The node a lease object belongs to, from its key. */
export function leaseOwner(key: string): NodeId | undefined {
  const rest = key.slice(LEASE_PREFIX.length);
  const slash = rest.indexOf('/');
  return slash > 0 ? rest.slice(0, slash) : undefined;
}

const EMPTY = new Uint8Array(0);

/**
 * Renews this node's lease every `renewEveryMs` while it is in touch with the metadata (its
 * consensus knows a leader): a node cut off from the metadata stops renewing even if its
 * clients still reach it, and is declared Dead like a crashed one. Renewal failures (store
 * down) are only logged; silence is what the observer judges.
 */
export class NodeLease {
  private timer?: Timer;
  private renewal = 0;
  private previous?: string;
  private stopped = true;
  private outOfTouch = false;

  constructor(
    private readonly deps: {
      self: NodeId;
      boot: string;
      consensus: StreamConsensus;
      store: ObjectStore;
      clock: Clock;
      /** The node's own logger: it already names the node, so the lease's lines do not again. */
      logger: Logger;
      renewEveryMs: number;
      /**
       * The silence after which the metadata leader may declare this node Dead (and fail it
       * over). Given, the lease bounds this node's acknowledgements (see `acknowledgeable`).
       */
      deadAfterMs?: number;
    },
  ) {}

  /** When the last renewal that reached the store was sent (or this lease started). */
  private heldSince?: number;
  /** When the renewal that ended the latest lapse was sent: the lease is unbroken only since then. */
  private heldAgainSince?: number;

  /**
   * Whether this node may still acknowledge appends: the observer counts a node's silence from
   * when it saw the node's last renewal, which is after that renewal was sent, so until
   * `deadAfterMs` after the send no failover can have taken this node's streams. One renewal
   * period is kept as margin for clocks that run at slightly different rates. A node that was
   * paused (GC, SIGSTOP) or cut off from the metadata for longer than that refuses to
   * acknowledge what it stored meanwhile: a failover may have happened, and an acknowledgement
   * after the new owner's first one would break the one-writer-at-a-time promise in real time.
   * The records stay stored below the new owner's fence, so a producer's retry finds them by
   * its sequence number (duplicate), never appended twice.
   */
  acknowledgeable(acceptedAt?: number): boolean {
    const { deadAfterMs, renewEveryMs, clock } = this.deps;
    if (deadAfterMs === undefined || this.heldSince === undefined) return true;
    // Held again after a lapse does not cover what was accepted before it: the process may
    // resume, renew and only then finish a write it began before the pause, after a failover.
    if (acceptedAt !== undefined && this.heldAgainSince !== undefined && acceptedAt < this.heldAgainSince) return false;
    return clock.now() < this.heldSince + deadAfterMs - renewEveryMs;
  }

  start(): void {
    this.heldSince ??= this.deps.clock.now();
    this.stopped = false;
    void this.clearStale();
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private tick(): void {
    if (this.stopped) return;
    void this.renew().finally(() => {
      if (!this.stopped) this.timer = this.deps.clock.setTimer(this.deps.renewEveryMs, () => this.tick());
    });
  }

  private async renew(): Promise<void> {
    const { consensus, store, self, boot, logger } = this.deps;
    if (consensus.leadership().leader === undefined) {
      if (!this.outOfTouch) logger.warn({}, 'no metadata leader in sight: lease renewals paused');
      this.outOfTouch = true;
      return;
    }
    this.outOfTouch = false;
    this.renewal += 1;
    const key = `${leasePrefix(self)}${boot}.${String(this.renewal).padStart(12, '0')}`;
    const sent = this.deps.clock.now();
    try {
      await store.put(key, EMPTY);
      const { deadAfterMs, renewEveryMs } = this.deps;
      const lapsedAt = this.heldSince === undefined || deadAfterMs === undefined ? undefined : this.heldSince + deadAfterMs - renewEveryMs;
      if (lapsedAt !== undefined && sent >= lapsedAt) this.heldAgainSince = Math.max(this.heldAgainSince ?? sent, sent);
      this.heldSince = Math.max(this.heldSince ?? sent, sent);
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'lease renewal failed');
      return;
    }
    const previous = this.previous;
    this.previous = key;
    if (previous) await store.delete(previous).catch(() => undefined);
  }

  /** Renewals a crash left behind would only lengthen the observer's listing. */
  private async clearStale(): Promise<void> {
    const { store, self } = this.deps;
    try {
      const page = await store.list(leasePrefix(self), { limit: 100 });
      for (const object of page.objects) {
        if (!object.key.startsWith(`${leasePrefix(self)}${this.deps.boot}.`)) await store.delete(object.key);
      }
    } catch {
      // Best effort: the observer takes the newest name per node either way.
    }
  }
}
