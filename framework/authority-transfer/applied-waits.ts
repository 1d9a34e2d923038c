import { type Clock, type Timer, BatonError, type MemberId } from '@baton/contracts';
import type { FeedOrigin } from './change-feed.js';
import type { AppliedPosition } from './feed-replicas.js';

/** Where a member's replicas stand, and a word after every apply or reset of one of them. */
export interface AppliedPositions {
  applied(origin: MemberId): AppliedPosition;
  /** `listener` hears the origin whose replica changed; returns the unsubscribe. */
  onApplied(listener: (origin: MemberId) => void): () => void;
}

export interface AppliedWaitLimits {
  /** The longest wait a caller may ask for (the probe's own timeout bounds it on the caller's side). */
  maxWaitMs: number;
  /** Waits one requester may hold parked at once: a member drives a handful of transfers per target. */
  perRequester: number;
  /** Waits parked in all, whoever asks: what bounds the memory a peer's requests can hold here. */
  total: number;
}

/** The longest wait a member holds by default, and so the longest a prober asks for. */
export const MAX_APPLIED_WAIT_MS = 10_000;

export const DEFAULT_APPLIED_WAIT_LIMITS: AppliedWaitLimits = { maxWaitMs: MAX_APPLIED_WAIT_MS, perRequester: 64, total: 256 };

/** No room for another parked wait: the caller reads the frontier again later (429 on the wire). */
export class AppliedWaitRefusedError extends BatonError {
  constructor(readonly scope: 'requester' | 'member', limit: number) {
    super(
      'applied_wait_refused',
      scope === 'requester'
        ? `this requester already holds ${limit} parked waits on this member: let one answer first`
        : `this member already holds ${limit} parked waits: ask again shortly`,
    );
  }
}

interface ParkedWait {
  origin: FeedOrigin;
  atLeast: number;
  requester: string;
  settle(position: AppliedPosition): void;
}

/**
 * Answers "tell me when your replica of this feed, in this incarnation, holds serial N" the
 * moment the replica's apply moves past N (the replicas announce each apply: no polling loop),
 * or after the asked wait with the position then. So a transfer's driver learns the target has
 * its final serials on the apply itself instead of at its next re-probe. Parked waits are kept
 * per origin, so an apply looks only at the waits on that one feed, and they are bounded per
 * requester and in all: a wait beyond either bound is refused rather than held.
 */
export class AppliedWaits {
  private readonly byOrigin = new Map<MemberId, Set<ParkedWait>>();
  private readonly byRequester = new Map<string, number>();
  private parked = 0;
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly positions: AppliedPositions,
    private readonly clock: Clock,
    readonly limits: AppliedWaitLimits = DEFAULT_APPLIED_WAIT_LIMITS,
  ) {
    this.unsubscribe = positions.onApplied((origin) => this.changed(origin));
  }

  /** Parked waits now (for tests and metrics). */
  get size(): number {
    return this.parked;
  }

  /**
   * The replica's position of `origin.member` once it holds `origin.incarnation` through
   * `atLeast`, or after `waitMs` (capped at the limit) whatever it holds. An abort of `signal`
   * ends the wait at once, rejecting with its reason, and frees its place.
   */
  async wait(origin: FeedOrigin, atLeast: number, waitMs: number, options: { requester: string; signal?: AbortSignal }): Promise<AppliedPosition> {
    options.signal?.throwIfAborted();
    const now = this.positions.applied(origin.member);
    if (this.closed || waitMs <= 0 || reaches(now, origin, atLeast)) return now;
    if (this.parked >= this.limits.total) throw new AppliedWaitRefusedError('member', this.limits.total);
    const held = this.byRequester.get(options.requester) ?? 0;
    if (held >= this.limits.perRequester) throw new AppliedWaitRefusedError('requester', this.limits.perRequester);

    return new Promise<AppliedPosition>((resolve, reject) => {
      // Settled once, by whichever comes first: the apply, the wait running out, the abort.
      const finish = (answer: () => void) => {
        if (!this.unpark(wait)) return;
        timer.cancel();
        options.signal?.removeEventListener('abort', onAbort);
        answer();
      };
      const onAbort = () => finish(() => reject(options.signal!.reason));
      const wait: ParkedWait = { origin, atLeast, requester: options.requester, settle: (position) => finish(() => resolve(position)) };
      this.park(wait, held);
      const timer: Timer = this.clock.setTimer(Math.min(waitMs, this.limits.maxWaitMs), () => wait.settle(this.positions.applied(origin.member)));
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Answers every parked wait with what the replicas hold now and parks no more (the member stops). */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    for (const [origin, waits] of [...this.byOrigin]) {
      const position = this.positions.applied(origin);
      for (const wait of [...waits]) wait.settle(position);
    }
  }

  private changed(origin: MemberId): void {
    const waits = this.byOrigin.get(origin);
    if (!waits) return;
    const position = this.positions.applied(origin);
    for (const wait of [...waits]) if (reaches(position, wait.origin, wait.atLeast)) wait.settle(position);
  }

  private park(wait: ParkedWait, held: number): void {
    let waits = this.byOrigin.get(wait.origin.member);
    if (!waits) this.byOrigin.set(wait.origin.member, (waits = new Set()));
    waits.add(wait);
    this.byRequester.set(wait.requester, held + 1);
    this.parked += 1;
  }

  /** False when the wait was answered already (a timer and an apply can race). */
  private unpark(wait: ParkedWait): boolean {
    const waits = this.byOrigin.get(wait.origin.member);
    if (!waits?.delete(wait)) return false;
    if (waits.size === 0) this.byOrigin.delete(wait.origin.member);
    const held = (this.byRequester.get(wait.requester) ?? 1) - 1;
    if (held === 0) this.byRequester.delete(wait.requester);
    else this.byRequester.set(wait.requester, held);
    this.parked -= 1;
    return true;
  }
}

function reaches(position: AppliedPosition, origin: FeedOrigin, atLeast: number): boolean {
  return position.incarnation === origin.incarnation && position.serial >= atLeast;
}
