import type { Clock, MemberId } from '@baton/contracts';
import type { Roster } from './roster.js';

export type MemberState = 'Alive' | 'Suspect' | 'Dead';

export interface MemberTrackerOptions {
  /** Silence after which a member is Suspect. */
  suspectAfterMs: number;
  /** Silence after which a member is Dead: the failover path may then move its authorities. */
  deadAfterMs: number;
}

export const DEFAULT_MEMBER_TRACKER_OPTIONS: MemberTrackerOptions = { suspectAfterMs: 5_000, deadAfterMs: 30_000 };

/**
 * Alive / Suspect / Dead per member, from how long ago it was last heard from (a successful
 * feed pull or probe). A member never heard from counts from the tracker's start, so a node
 * that just booted does not declare its peers dead at once. A datacenter is as alive as its
 * liveliest member: it is Dead only when every member is.
 */
export class MemberTracker {
  private readonly lastHeard = new Map<MemberId, number>();
  private readonly startedAt: number;

  constructor(
    private readonly clock: Clock,
    private readonly roster: Roster,
    private readonly self: MemberId,
    private readonly options: MemberTrackerOptions = DEFAULT_MEMBER_TRACKER_OPTIONS,
  ) {
    if (!(options.deadAfterMs > options.suspectAfterMs)) {
      throw new RangeError(`deadAfterMs (${options.deadAfterMs}) must exceed suspectAfterMs (${options.suspectAfterMs})`);
    }
    this.startedAt = clock.now();
  }

  heard(member: MemberId): void {
    this.lastHeard.set(member, this.clock.now());
  }

  state(member: MemberId): MemberState {
    if (member === this.self) return 'Alive';
    const silence = this.clock.now() - (this.lastHeard.get(member) ?? this.startedAt);
    if (silence >= this.options.deadAfterMs) return 'Dead';
    if (silence >= this.options.suspectAfterMs) return 'Suspect';
    return 'Alive';
  }

  /** An unknown datacenter has no members and reads as Dead. */
  datacenterState(datacenter: string): MemberState {
    const states = this.roster.membersOf(datacenter).map((m) => this.state(m.id));
    if (states.includes('Alive')) return 'Alive';
    if (states.includes('Suspect')) return 'Suspect';
    return 'Dead';
  }

  snapshot(): { member: MemberId; datacenter: string; state: MemberState; last_heard_ms_ago: number | null }[] {
    const now = this.clock.now();
    return this.roster.allMembers().map((m) => {
      const heard = m.id === this.self ? now : this.lastHeard.get(m.id);
      return {
        member: m.id,
        datacenter: this.roster.datacenterOfMember(m.id)!,
        state: this.state(m.id),
        last_heard_ms_ago: heard === undefined ? null : now - heard,
      };
    });
  }
}
