import {
  type Clock,
  NotAppendedError,
  type LogPosition,
  type Receipt,
  type MemberId,
} from '@baton/contracts';
import type { ProposeOutcome } from '../core/types.js';
import type { Deadlines } from './deadlines.js';
import type { Forwarder } from './forwarding.js';
import { responseError } from './forwarding.js';
import { PendingProposal, type Waiter } from './waiter.js';

export type MembershipChange = 'add' | 'remove';

/** What membership changes need from the driver. */
export interface MembershipHost {
  readonly self: MemberId;
  readonly cluster: string;
  readonly clock: Clock;
  readonly deadlines: Deadlines;
  readonly forwarder: Forwarder;
  /** How long a change may take in all, and the longest wait for news of a leader. */
  readonly timeoutMs: number;
  readonly leaderWaitMs: number;
  assertRunning(what: string): void;
  running(): boolean;
  isLeader(): boolean;
  /** The leader this member knows of, or undefined. */
  knownLeader(): MemberId | undefined;
  voters(): MemberId[];
  appliedPosition(): LogPosition;
  /** Runs `input` in the driver's loop, one input at a time with the core. */
  enqueue(input: () => void): void;
  proposeConfChange(change: { type: MembershipChange; member: MemberId }): ProposeOutcome;
  addWaiter(index: number, term: number, w: Waiter): void;
  waitForLeadershipChange(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Adding and removing voters: on the leader a configuration change appended to the log and
 * waited for like a proposal; on a follower forwarded to the leader, retried while leadership
 * moves, within one timeout.
 */
export class MembershipChanges {
  constructor(private readonly host: MembershipHost) {}

  /** `expectedVoters`: append only if the voters in force are exactly these (a check-and-set). */
  async change(change: MembershipChange, member: MemberId, signal?: AbortSignal, expectedVoters?: readonly MemberId[]): Promise<void> {
    const host = this.host;
    host.assertRunning(`${change}Voter`);
    const timeoutMs = host.timeoutMs;
    const deadline = host.clock.now() + timeoutMs;
    for (;;) {
      const remaining = deadline - host.clock.now();
      if (remaining <= 0)
        throw new NotAppendedError(
          'no_leader',
          `no leader accepted the membership change within ${timeoutMs} ms`,
        );
      const leader = host.knownLeader();
      if (host.isLeader()) {
        const outcome = await this.changeHere(change, member, remaining, expectedVoters);
        if (outcome !== 'retry') return;
      } else if (leader !== undefined) {
        const response = await host.forwarder.request(
          leader,
          { kind: 'conf', cluster: host.cluster, change, member, timeoutMs: remaining, ...(expectedVoters ? { expectedVoters: [...expectedVoters] } : {}) },
          remaining,
          signal,
        );
        if (response.ok) return;
        if (!(response.kind === 'not_appended' && response.reason === 'no_leader'))
          throw responseError(response);
      }
      await host.waitForLeadershipChange(
        Math.min(deadline - host.clock.now(), host.leaderWaitMs),
        signal,
      );
    }
  }

  /** Appends the change on this member, which believes it leads; 'retry' when it does not. */
  changeHere(
    change: MembershipChange,
    member: MemberId,
    timeoutMs: number,
    expectedVoters?: readonly MemberId[],
  ): Promise<'done' | 'retry'> {
    return new Promise<Receipt<unknown> | 'retry'>((resolve, reject) => {
      const p = new PendingProposal(
        'membership change',
        timeoutMs,
        this.host.deadlines,
        this.host.clock.now(),
        undefined,
        resolve,
        reject,
        nothing,
      );
      this.host.enqueue(() => this.appendChange(p, change, member, expectedVoters));
    }).then((outcome) => (outcome === 'retry' ? 'retry' : 'done'));
  }

  private appendChange(p: PendingProposal, change: MembershipChange, member: MemberId, expectedVoters?: readonly MemberId[]): void {
    const host = this.host;
    if (p.settled) return;
    if (!host.running()) {
      return p.fail(new NotAppendedError('stopped', `member ${host.self} stopped`));
    }
    if (!host.isLeader()) return p.retry();
    // Checked in the loop, with the core: no other change can land between this and the append.
    if (expectedVoters && !sameMembers(host.voters(), expectedVoters)) {
      return p.fail(
        new NotAppendedError(
          'membership_changed',
          `the voters are ${[...host.voters()].sort().join(', ')}, not the ${[...expectedVoters].sort().join(', ')} the change was checked against: read them again`,
        ),
      );
    }
    const isVoter = host.voters().includes(member);
    if ((change === 'add' && isVoter) || (change === 'remove' && !isVoter)) {
      // Already in effect: nothing to append.
      return p.succeed({ position: { ...host.appliedPosition() }, result: null, replayed: true });
    }
    const r = host.proposeConfChange({ type: change, member });
    if (!r.ok) {
      if (r.reason === 'conf_change_pending' || r.reason === 'invalid_conf_change') {
        return p.fail(new NotAppendedError('membership_change_in_progress', r.detail));
      }
      return p.retry();
    }
    p.appended = true;
    host.addWaiter(r.index, r.term, p);
  }
}

function nothing(): void {}

function sameMembers(a: readonly MemberId[], b: readonly MemberId[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}
