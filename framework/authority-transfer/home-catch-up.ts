import type { Clock, Timer, Logger, MemberId } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import type { FeedReplicas } from './feed-replicas.js';
import type { FinalSerial, Ownership, OwnershipState } from './ownership.js';
import { unsettledAt } from './ownership-index.js';
import { HomeCatchingUpError } from './transfer-errors.js';

/** Authorities followed at once (waiting to catch up, or settling): past it, the oldest are forgotten. */
const MAX_FOLLOWED = 10_000;
/** Shortfalls an operator's view lists (the count covers them all). */
export const MAX_SHORTFALLS_SHOWN = 20;

/** One authority this member is home of and does not yet hold a final of (what status shows). */
export interface CatchUpShortfall {
  authority: string;
  epoch: number;
  /** The source member whose final this member's replica is short of. */
  source: MemberId;
  incarnation: string;
  final: number;
  held: number;
}

export interface HomeCatchUpOptions {
  /** How often the moves to this datacenter not yet settled are looked over (default 500 ms). */
  sweepIntervalMs?: number;
  /** A write was refused: the replicas should pull now rather than at their next round. */
  onBehind?: () => void;
  /** Counts each refused write (the /metrics counter). */
  onRefused?: () => void;
  /**
   * The members of this datacenter as the roster lists them: a settle names them, so the move
   * leaves the index of unsettled moves once every one of them settled.
   */
  homeMembers?: readonly MemberId[];
}

/**
 * The new home's side of a planned move's barrier. The driver commits once it read the target at
 * the source members' final serials, but the target can lose its replica between that reading
 * and the commit's apply; the commit therefore records the finals in the ownership record, and
 * this member, once home, acknowledges no write under the new epoch until its own replica holds
 * every one of them (the fence calls `assertHolds` in the step that assigns a write's serial).
 * The check is one replica lookup per source member, against the replicated record and the
 * durable replica, so it holds across this member's restart. Once it holds, this member settles
 * the requirement by a consensus command and checks no more: the home owns the data from then
 * on, and a source feed that later starts a new incarnation (its member lost its disk) must not
 * block the home's writes. It settles as soon as it holds them, not only at the first write: a
 * move applied while this member runs is followed (bounded) and settled once its replicas reach
 * the finals, so an authority that gets no write for a while is not left unsettled until its
 * source's feed is gone. On start, and again whenever the applied state was replaced by a
 * snapshot, it follows the moves the replicated index of unsettled moves lists for its
 * datacenter (`unsettledByHome`: no scan of the authorities), so a member restarted before it
 * settled settles without waiting for a write.
 */
export class HomeCatchUp {
  /** authority@epoch this member refused a write for and has not caught up on (logged once). */
  private readonly behind = new Set<string>();
  /** authority@epoch whose settle proposal is in flight. */
  private readonly settling = new Set<string>();
  /** authority@epoch -> a move to this datacenter applied since start, not yet settled by this member. */
  private readonly following = new Map<string, { authority: string; epoch: number }>();
  /** authority@epoch -> the first final this member's replicas were last seen short of. */
  private readonly short = new Map<string, CatchUpShortfall>();
  /** The applied state the index was last read from: another one means a snapshot was installed. */
  private seededFrom: OwnershipState | undefined;
  private refusals = 0;
  private unsubscribe: (() => void) | undefined;
  private timer: Timer | undefined;

  constructor(
    private readonly self: MemberId,
    /** The datacenter this member serves. */
    private readonly datacenter: string,
    private readonly replicas: Pick<FeedReplicas, 'applied' | 'appliedSerial'>,
    private readonly consensus: OwnershipConsensus,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: HomeCatchUpOptions = {},
  ) {}

  /** Follows the planned moves to this datacenter as they apply, and settles each once held. */
  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.consensus.watch((view, entry) => {
      if (view.state !== this.seededFrom) this.followUnsettled(view.state);
      const { command, result } = entry;
      if (command.type !== 'commit_planned_transfer' || !result.ok || !('record' in result)) return;
      const { record } = result;
      // A replay answered from the sealed record moved nothing.
      if (record.target !== this.datacenter || record.commit_index !== entry.position.index) return;
      if (!view.state.authorities.get(record.authority)?.catchUp) return;
      this.settleIfHeld(this.follow(record.authority, record.epoch));
    });
    this.followUnsettled(this.consensus.view().state);
    this.schedule();
  }

  /** Follows every move the index lists for this datacenter that this member has not settled. */
  private followUnsettled(state: OwnershipState): void {
    this.seededFrom = state;
    for (const authority of unsettledAt(state, this.datacenter)) {
      const ownership = state.authorities.get(authority);
      if (!ownership?.catchUp || ownership.catchUp.settled.includes(this.self)) continue;
      // Bounded like every follow: past it, the first write settles what was left out.
      if (this.following.size >= MAX_FOLLOWED) break;
      this.settleIfHeld(this.follow(authority, ownership.epoch));
    }
  }

  private follow(authority: string, epoch: number): string {
    const key = `${authority}@${epoch}`;
    if (!this.following.has(key)) this.forgetOldestIfFull(this.following);
    this.following.set(key, { authority, epoch });
    return key;
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * Authorities this member is home of and was last seen short of a final on (a refused write, or
   * a followed move looked over): what `baton_homes_catching_up` reports.
   */
  get catchingUp(): number {
    return this.short.size;
  }

  /** The first MAX_SHORTFALLS_SHOWN of them, oldest first, with the final and what is held. */
  shortfalls(): CatchUpShortfall[] {
    const shown: CatchUpShortfall[] = [];
    for (const shortfall of this.short.values()) {
      if (shown.length >= MAX_SHORTFALLS_SHOWN) break;
      shown.push({ ...shortfall });
    }
    return shown;
  }

  /** Writes refused so far because this member had not caught up. */
  get refused(): number {
    return this.refusals;
  }

  /** Throws HomeCatchingUpError while this member's replicas hold less than the move's finals. */
  assertHolds(authority: string, ownership: Ownership): void {
    const catchUp = ownership.catchUp;
    if (!catchUp || catchUp.settled.includes(this.self)) return;
    const key = `${authority}@${ownership.epoch}`;
    for (const final of catchUp.finals) {
      if (final.member === this.self) continue; // its own feed: everything in it is here
      const held = this.replicas.appliedSerial(final);
      if (held < final.serial) this.refuse(key, authority, ownership.epoch, final, held);
    }
    this.settle(key, authority, ownership.epoch);
  }

  /** Settles a followed move if this member holds its finals; forgets it once settled or moved on. */
  private settleIfHeld(key: string): void {
    const followed = this.following.get(key);
    if (!followed) return;
    const ownership = this.consensus.view().state.authorities.get(followed.authority);
    const catchUp = ownership?.catchUp;
    if (!ownership || ownership.epoch !== followed.epoch || ownership.home !== this.datacenter || !catchUp || catchUp.settled.includes(this.self)) {
      this.following.delete(key);
      this.short.delete(key);
      return;
    }
    for (const final of catchUp.finals) {
      if (final.member === this.self) continue;
      const held = this.replicas.appliedSerial(final);
      if (held < final.serial) {
        this.noteShort(key, followed.authority, followed.epoch, final, held);
        return;
      }
    }
    this.settle(key, followed.authority, followed.epoch);
  }

  private schedule(): void {
    this.timer = this.clock.setTimer(this.options.sweepIntervalMs ?? 500, () => {
      if (!this.unsubscribe) return;
      const { state } = this.consensus.view();
      if (state !== this.seededFrom) this.followUnsettled(state);
      for (const key of [...this.following.keys()]) this.settleIfHeld(key);
      this.schedule();
    });
  }

  private refuse(key: string, authority: string, epoch: number, final: FinalSerial, held: number): never {
    this.refusals += 1;
    this.options.onRefused?.();
    this.noteShort(key, authority, epoch, final, held);
    // Followed from now on: it settles without another write, and leaves the count if it moves on.
    this.follow(authority, epoch);
    if (!this.behind.has(key)) {
      this.forgetOldestIfFull(this.behind);
      this.behind.add(key);
      const position = this.replicas.applied(final.member);
      this.log.warn(
        { authority, epoch, source: final.member, incarnation: final.incarnation, final: final.serial, held, replicaIncarnation: position.incarnation ?? null },
        position.incarnation !== undefined && position.incarnation !== final.incarnation
          ? 'new home holds another incarnation of the source feed than the move recorded: the source lost its feed; writes stay refused until an operator moves the authority'
          : 'new home is short of the final serial the move recorded (its replica was lost or reset after the barrier was read): writes are refused with 503 until it caught up',
      );
    }
    this.options.onBehind?.();
    throw new HomeCatchingUpError(authority, epoch, final.member, final.serial, held);
  }

  private noteShort(key: string, authority: string, epoch: number, final: FinalSerial, held: number): void {
    if (!this.short.has(key)) this.forgetOldestIfFull(this.short);
    this.short.set(key, { authority, epoch, source: final.member, incarnation: final.incarnation, final: final.serial, held });
  }

  /** Says once (per authority and epoch, while not settled) that this member holds every final. */
  private settle(key: string, authority: string, epoch: number): void {
    this.short.delete(key);
    if (this.settling.has(key)) return;
    if (this.behind.delete(key)) this.log.info({ authority, epoch }, 'new home caught up on the final serials the move recorded: writes are accepted');
    this.forgetOldestIfFull(this.settling);
    this.settling.add(key);
    const homeMembers = this.options.homeMembers?.length ? [...this.options.homeMembers] : undefined;
    // A failed proposal is retried by the next write or sweep, which finds the requirement unsettled.
    this.consensus
      .propose({ type: 'settle_catch_up', authority, epoch, member: this.self, ...(homeMembers ? { homeMembers } : {}) })
      .catch((error: unknown) => this.log.debug({ authority, epoch, err: (error as Error).message }, 'settling the catch-up failed; the next write or look-over retries'))
      .finally(() => this.settling.delete(key));
  }

  private forgetOldestIfFull(collection: { size: number; keys(): IterableIterator<string>; delete(key: string): boolean }): void {
    if (collection.size < MAX_FOLLOWED) return;
    const oldest = collection.keys().next();
    if (!oldest.done) collection.delete(oldest.value);
  }
}
