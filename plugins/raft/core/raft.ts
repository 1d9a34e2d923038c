import type { MemberId, Rng } from '@baton/contracts';
import { Progress } from './progress.js';
import { RaftInvariantError, RaftLog } from './raft-log.js';
import { ReadIndexTracker } from './read-index.js';
import type { LogStorage } from './storage.js';
import {
  NONE,
  type ConfChange,
  type Entry,
  type HardState,
  type Message,
  type MessageType,
  type ProposeOutcome,
  type ReadState,
  type Ready,
  type Role,
  type Snapshot,
  type SoftState,
} from './types.js';

/** @internal */
export interface RaftConfig {
  id: MemberId;
  /** Stable log, hard state and snapshot (its voters are the configuration at its index). */
  storage: LogStorage;
  /** Source of randomized election timeouts. */
  rng: Rng;
  /** A follower campaigns after a random number of ticks in [electionTicks, 2*electionTicks). */
  electionTicks?: number;
  heartbeatTicks?: number;
  /** Index the application has applied (its state is durable up to here); default: the snapshot. */
  applied?: number;
  /** Append messages in flight per follower while replicating. */
  maxInflight?: number;
  /** Entries per append message. */
  maxEntriesPerMessage?: number;
  /** Committed entries handed out per Ready; the rest wait for the next. Default 256. */
  maxCommittedPerReady?: number;
}

/** Context marking a campaign started by TimeoutNow: voters grant it despite the leader lease. */
const TRANSFER = 'transfer';

/**
 * A pure Raft state machine in the style of etcd-io/raft. Input: `tick()`, `step(message)` and
 * the local requests (`propose`, `proposeConfChange`, `readIndex`, `transferLeader`,
 * `campaign`). Output: `ready()`, which the driver persists, sends and applies before calling
 * `advance()`. No I/O, no timers, no randomness except through the injected Rng.
 *
 * Features: pre-vote and check-quorum (with a leader lease that makes voters ignore disruptive
 * candidates), pipelined replication with probe/replicate/snapshot progress and conflict-term
 * hints, commit by the current-term rule, a no-op entry on election, ReadIndex reads, leadership
 * transfer by TimeoutNow, InstallSnapshot for followers behind the compaction point.
 *
 * Membership: one voter added or removed at a time. A change takes effect when it is applied
 * (handed out as committed and acknowledged by `advance`), as in etcd. A leader refuses a second
 * change while an earlier one is not yet applied, and a new leader refuses changes until every
 * entry it inherited is applied, so consecutive configurations always differ by one voter and
 * their majorities overlap.
 *
 * @internal
 */
export class RaftCore {
  readonly id: MemberId;
  term = 0;
  vote: MemberId = NONE;
  lead: MemberId = NONE;
  role: Role = 'follower';
  readonly log: RaftLog;
  private voterSet: Set<MemberId>;
  private progress = new Map<MemberId, Progress>();
  private votes = new Map<MemberId, boolean>();
  private msgs: Message[] = [];
  private readStates: ReadState[] = [];
  private electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTimeout = 0;
  private leaderTicks = 0;
  private readonly electionTicks: number;
  private readonly heartbeatTicks: number;
  private readonly maxInflight: number;
  private readonly maxEntries: number;
  private readonly maxCommittedPerReady: number;
  private readonly rng: Rng;
  leadTransferee: MemberId = NONE;
  private pendingConfIndex = 0;
  private readonly reads = new ReadIndexTracker();
  /** Reads that arrived before this leader committed an entry of its term. */
  private deferredReads: Message[] = [];
  private prevSoft: SoftState;
  private prevHard: HardState;
  private outstanding: Ready | undefined;
  /** Entries were appended locally and not yet offered to followers. */
  private appendPending = false;
  /** See HardState.catchUpTo: 0 when this member's log lost nothing it may have acknowledged. */
  private catchUpTo = 0;
  /**
   * A leader of our term has found our log matching its own (an append fitted, or its snapshot
   * was installed) since we started or the term changed: its progress of us is then true.
   */
  private matchedLeader = false;

  constructor(config: RaftConfig) {
    this.id = config.id;
    this.rng = config.rng;
    this.electionTicks = config.electionTicks ?? 10;
    this.heartbeatTicks = config.heartbeatTicks ?? 1;
    this.maxInflight = config.maxInflight ?? 256;
    this.maxEntries = config.maxEntriesPerMessage ?? 64;
    this.maxCommittedPerReady = config.maxCommittedPerReady ?? 256;
    if (this.heartbeatTicks >= this.electionTicks) {
      throw new RangeError(
        `heartbeat ticks (${this.heartbeatTicks}) must be below election ticks (${this.electionTicks})`,
      );
    }
    const storage = config.storage;
    const snapshot = storage.snapshot();
    this.log = new RaftLog(storage, config.applied ?? snapshot.meta.index);
    this.voterSet = new Set(snapshot.meta.voters);
    // Configuration changes the application already applied past its snapshot.
    for (let i = snapshot.meta.index + 1; i <= this.log.applied; i++) {
      const e = this.log.slice(i, i + 1)?.[0];
      if (e?.type === 'conf') this.voterSet = new Set((e.data as ConfChange).voters);
      this.sortedVoters = undefined;
    }
    const hs = storage.hardState();
    this.term = hs.term;
    this.vote = hs.vote;
    this.catchUpTo = hs.catchUpTo ?? 0;
    this.prevHard = hs;
    this.becomeFollower(this.term, NONE);
    this.prevSoft = { lead: this.lead, role: this.role };
  }

  // ---- inspection ----

  private sortedVoters: MemberId[] | undefined;

  /** The voters in force, sorted (cached: asked for on every message). */
  voters(): MemberId[] {
    this.sortedVoters ??= [...this.voterSet].sort();
    return this.sortedVoters;
  }

  isVoter(id: MemberId = this.id): boolean {
    return this.voterSet.has(id);
  }

  hardState(): HardState {
    const hs: HardState = { term: this.term, vote: this.vote, commit: this.log.committed };
    if (this.catchUpTo > 0) hs.catchUpTo = this.catchUpTo;
    return hs;
  }

  /**
   * True while this member must not vote or campaign: a repair dropped entries it may have
   * acknowledged (HardState.catchUpTo). A lone voter has nobody to catch up from, so for it
   * the dropped entries are simply gone and it goes on.
   */
  catchingUp(): boolean {
    if (this.catchUpTo === 0) return false;
    if (this.voterSet.size === 1 && this.voterSet.has(this.id)) this.catchUpTo = 0;
    return this.catchUpTo > 0;
  }

  progressOf(id: MemberId): Readonly<Progress> | undefined {
    return this.progress.get(id);
  }

  private quorum(): number {
    return Math.floor(this.voterSet.size / 2) + 1;
  }

  // ---- driver interface ----

  hasReady(): boolean {
    if (this.outstanding) return false;
    this.flushAppends();
    const soft = this.prevSoft;
    const hs = this.hardState();
    return (
      soft.lead !== this.lead ||
      soft.role !== this.role ||
      hs.term !== this.prevHard.term ||
      hs.vote !== this.prevHard.vote ||
      hs.commit !== this.prevHard.commit ||
      hs.catchUpTo !== this.prevHard.catchUpTo ||
      this.log.pendingSnapshot() !== undefined ||
      this.log.unstableEntries().length > 0 ||
      this.log.hasNextCommittedEntries() ||
      this.msgs.length > 0 ||
      this.readStates.length > 0
    );
  }

  /** Takes the pending work. Call `advance()` once it is persisted, sent and applied. */
  ready(): Ready {
    if (this.outstanding) throw new RaftInvariantError('ready() called again before advance()');
    this.flushAppends();
    const rd: Ready = {
      entries: [...this.log.unstableEntries()],
      committedEntries: this.log.nextCommittedEntries(this.maxCommittedPerReady),
      messages: this.msgs,
      readStates: this.readStates,
    };
    if (this.prevSoft.lead !== this.lead || this.prevSoft.role !== this.role) {
      rd.softState = { lead: this.lead, role: this.role };
      this.prevSoft = rd.softState;
    }
    const hs = this.hardState();
    // prevHard is durable: the driver handles one Ready at a time.
    const termOrVoteChanged = hs.term !== this.prevHard.term || hs.vote !== this.prevHard.vote;
    if (termOrVoteChanged || hs.commit !== this.prevHard.commit || hs.catchUpTo !== this.prevHard.catchUpTo) {
      rd.hardState = hs;
      this.prevHard = hs;
    }
    const snap = this.log.pendingSnapshot();
    if (snap) rd.snapshot = snap;
    if (this.role === 'leader' && !termOrVoteChanged && !snap && rd.messages.length > 0)
      rd.messagesFirst = true;
    this.msgs = [];
    this.readStates = [];
    this.outstanding = rd;
    return rd;
  }

  /** The last Ready is durable, its messages sent and its committed entries applied. */
  advance(): void {
    const rd = this.outstanding;
    if (!rd) throw new RaftInvariantError('advance() without a pending ready()');
    this.outstanding = undefined;
    if (rd.snapshot) {
      this.log.stableSnapTo(rd.snapshot.meta.index);
      this.log.appliedTo(Math.max(this.log.applied, rd.snapshot.meta.index));
    }
    if (rd.entries.length > 0) {
      const last = rd.entries[rd.entries.length - 1];
      this.log.stableTo(last.index, last.term);
    }
    for (const e of rd.committedEntries) {
      this.log.appliedTo(e.index);
      if (e.type === 'conf') this.applyConfChange(e.data as ConfChange);
    }
    if (this.role === 'leader') {
      // The leader counts its own log towards a quorum only once it is durable.
      const self = this.progress.get(this.id);
      if (self) self.maybeUpdate(this.log.persistedIndex());
      if (this.maybeCommit()) this.bcastAppend();
    }
  }

  // ---- local requests ----

  tick(): void {
    if (this.role === 'leader') this.tickHeartbeat();
    else this.tickElection();
  }

  /** Starts an election now (pre-vote first), as if the election timeout had elapsed. */
  campaign(): void {
    this.hup(false);
  }

  propose(data: unknown): ProposeOutcome {
    const refusal = this.refuseProposal();
    if (refusal) return refusal;
    const e = this.appendEntry('normal', data);
    return { ok: true, index: e.index, term: e.term };
  }

  proposeConfChange(change: { type: 'add' | 'remove'; member: MemberId }): ProposeOutcome {
    const refusal = this.refuseProposal();
    if (refusal) return refusal;
    if (this.pendingConfIndex > this.log.applied) {
      return {
        ok: false,
        reason: 'conf_change_pending',
        detail: `a membership change (index ${this.pendingConfIndex}) is not applied yet; retry once it is`,
      };
    }
    const voters = new Set(this.voterSet);
    if (change.type === 'add') {
      if (voters.has(change.member)) {
        return {
          ok: false,
          reason: 'invalid_conf_change',
          detail: `${change.member} is already a voter`,
        };
      }
      voters.add(change.member);
    } else {
      if (!voters.has(change.member)) {
        return {
          ok: false,
          reason: 'invalid_conf_change',
          detail: `${change.member} is not a voter`,
        };
      }
      if (voters.size === 1) {
        return {
          ok: false,
          reason: 'invalid_conf_change',
          detail: `cannot remove the last voter ${change.member}`,
        };
      }
      voters.delete(change.member);
    }
    const cc: ConfChange = { type: change.type, member: change.member, voters: [...voters].sort() };
    const e = this.appendEntry('conf', cc);
    this.pendingConfIndex = e.index;
    return { ok: true, index: e.index, term: e.term };
  }

  /**
   * Asks for a linearizable read index. The answer arrives as a ReadState with this context in a
   * later Ready (dropped silently if leadership is lost: the caller times out and retries).
   */
  readIndex(context: string): void {
    const m: Message = { type: 'read-index', from: this.id, to: this.id, term: 0, context };
    if (this.role === 'leader') this.leaderReadIndex(m);
    else if (this.lead !== NONE) this.send({ type: 'read-index', to: this.lead, context });
  }

  /** Hands leadership to `to` once it has caught up (TimeoutNow); aborted after an election timeout. */
  transferLeader(to: MemberId): void {
    if (this.role !== 'leader' || to === this.id || !this.voterSet.has(to)) return;
    if (this.leadTransferee === to) return;
    this.leadTransferee = to;
    this.electionElapsed = 0;
    const pr = this.progress.get(to)!;
    if (pr.match === this.log.lastIndex()) this.send({ type: 'timeout-now', to });
    else this.sendAppend(to);
  }

  private refuseProposal(): ProposeOutcome | undefined {
    if (this.role !== 'leader') {
      return {
        ok: false,
        reason: 'not_leader',
        detail: `${this.id} is not the leader (leader: ${this.lead || 'unknown'})`,
      };
    }
    if (this.leadTransferee !== NONE) {
      return {
        ok: false,
        reason: 'transferring',
        detail: `leadership is moving to ${this.leadTransferee}`,
      };
    }
    return undefined;
  }

  // ---- message handling ----

  step(m: Message): void {
    if (m.to !== this.id) return;
    if (m.term > this.term) {
      if (m.type === 'vote' || m.type === 'pre-vote') {
        const force = m.context === TRANSFER;
        const inLease = this.lead !== NONE && this.electionElapsed < this.electionTicks;
        // Check-quorum lease: while we hear from a live leader, a candidate cannot disrupt it.
        if (!force && inLease) return;
      }
      if (m.type === 'pre-vote') {
        // A pre-vote never changes our term.
      } else if (m.type === 'pre-vote-resp' && !m.reject) {
        // Granted pre-votes carry the future term; counted in stepCandidate.
      } else {
        const leaderish = m.type === 'app' || m.type === 'heartbeat' || m.type === 'snap';
        this.becomeFollower(m.term, leaderish ? m.from : NONE);
      }
    } else if (m.term < this.term) {
      if (m.type === 'heartbeat' || m.type === 'app') {
        // A stale leader (e.g. healed from a partition) learns the new term and steps down. If
        // the sender has meanwhile become leader of our term, index 0 acknowledges nothing.
        this.send({ type: 'app-resp', to: m.from, index: 0 });
      } else if (m.type === 'pre-vote') {
        this.send({ type: 'pre-vote-resp', to: m.from, reject: true });
      }
      return;
    }

    if (m.type === 'vote' || m.type === 'pre-vote') {
      this.handleVoteRequest(m);
      return;
    }
    switch (this.role) {
      case 'leader':
        this.stepLeader(m);
        break;
      case 'candidate':
      case 'pre-candidate':
        this.stepCandidate(m);
        break;
      case 'follower':
        this.stepFollower(m);
        break;
    }
  }

  private handleVoteRequest(m: Message): void {
    const respType: MessageType = m.type === 'vote' ? 'vote-resp' : 'pre-vote-resp';
    const canVote =
      !this.catchingUp() &&
      (this.vote === m.from ||
      (this.vote === NONE && this.lead === NONE) ||
      (m.type === 'pre-vote' && m.term > this.term));
    if (canVote && this.log.isUpToDate(m.index!, m.logTerm!)) {
      // A granted vote answers in the candidate's term, so a pre-candidate can count it.
      this.msgs.push({ type: respType, from: this.id, to: m.from, term: m.term });
      if (m.type === 'vote') {
        this.electionElapsed = 0;
        this.vote = m.from;
      }
    } else {
      this.send({ type: respType, to: m.from, reject: true });
    }
  }

  private stepLeader(m: Message): void {
    if (m.type === 'read-index') {
      this.leaderReadIndex(m);
      return;
    }
    const pr = this.progress.get(m.from);
    if (!pr) return;
    switch (m.type) {
      case 'app-resp':
        pr.recentActive = true;
        if (m.reject) {
          let hint = m.rejectHint ?? 0;
          if ((m.logTerm ?? 0) > 0) hint = this.log.findConflictByTerm(hint, m.logTerm!);
          if (pr.maybeDecrTo(m.index!, hint)) {
            if (pr.state === 'replicate') pr.becomeProbe();
            this.sendAppend(m.from);
          }
          return;
        }
        {
          const wasPaused = pr.isPaused();
          if (!pr.maybeUpdate(m.index!)) {
            if (wasPaused && !pr.isPaused()) this.sendAppend(m.from);
            return;
          }
          if (pr.state === 'probe') pr.becomeReplicate();
          else if (pr.state === 'snapshot' && pr.match >= pr.pendingSnapshot) {
            pr.becomeProbe();
            pr.becomeReplicate();
          } else if (pr.state === 'replicate') pr.inflights.freeLE(m.index!);
          if (this.maybeCommit()) this.bcastAppend();
          else if (wasPaused) this.sendAppend(m.from);
          // Pipelining: keep the follower's window full while there is something to send.
          while (this.sendAppend(m.from, false)) {
            /* next batch */
          }
          if (m.from === this.leadTransferee && pr.match === this.log.lastIndex()) {
            this.send({ type: 'timeout-now', to: m.from });
          }
        }
        return;
      case 'heartbeat-resp':
        pr.recentActive = true;
        pr.probeSent = false;
        if (m.reject && pr.match > (m.commit ?? 0)) {
          // The follower lost entries it had acknowledged (its log was repaired): only its
          // commit index is surely ours. Count it no higher, and find where we agree again.
          pr.match = m.commit ?? 0;
          pr.becomeProbe();
        }
        if (pr.state === 'replicate' && pr.inflights.full()) pr.inflights.freeFirstOne();
        if (pr.state === 'snapshot' && this.leaderTicks - pr.snapshotSentAt >= this.electionTicks) {
          // The snapshot (or its answer) was likely lost: probe again, which resends it.
          pr.becomeProbe();
        }
        if (pr.match < this.log.lastIndex()) this.sendAppend(m.from);
        if (m.readSeq !== undefined)
          this.releaseReads(this.reads.ack(m.from, m.readSeq, this.voters(), this.quorum()));
        return;
      default:
        return;
    }
  }

  private stepCandidate(m: Message): void {
    switch (m.type) {
      case 'app':
      case 'heartbeat':
      case 'snap':
        // A leader exists in our term: stand down and follow it.
        this.becomeFollower(m.term, m.from);
        this.stepFollower(m);
        return;
      case 'vote-resp':
      case 'pre-vote-resp': {
        const mine = this.role === 'pre-candidate' ? 'pre-vote-resp' : 'vote-resp';
        if (m.type !== mine) return;
        this.votes.set(m.from, !m.reject);
        const granted = [...this.votes].filter(([id, v]) => v && this.voterSet.has(id)).length;
        const rejected = [...this.votes].filter(([id, v]) => !v && this.voterSet.has(id)).length;
        if (granted >= this.quorum()) {
          if (this.role === 'pre-candidate') this.startElection(false);
          else {
            this.becomeLeader();
            this.bcastAppend();
          }
        } else if (rejected >= this.quorum() || this.voterSet.size - rejected < this.quorum()) {
          this.becomeFollower(this.term, NONE);
        }
        return;
      }
      default:
        return;
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case 'app':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleAppend(m);
        return;
      case 'heartbeat':
        this.electionElapsed = 0;
        this.lead = m.from;
        if (this.catchingUp() && !this.matchedLeader) {
          // A leader that was ours before the repair still thinks we hold what we acknowledged:
          // it would count those entries and tell us to commit what we may hold differently.
          // Say what we surely hold (our commit index) and where our log ends, so it probes again.
          this.send({ type: 'heartbeat-resp', to: m.from, readSeq: m.readSeq, reject: true, index: this.log.lastIndex(), commit: this.log.committed });
          return;
        }
        this.log.commitTo(Math.min(m.commit ?? 0, this.log.lastIndex()));
        this.send({ type: 'heartbeat-resp', to: m.from, readSeq: m.readSeq });
        return;
      case 'snap':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleSnapshot(m);
        return;
      case 'timeout-now':
        if (this.voterSet.has(this.id)) this.hup(true);
        return;
      case 'read-index':
        if (this.lead !== NONE)
          this.send({ type: 'read-index', to: this.lead, context: m.context });
        return;
      case 'read-index-resp':
        this.readStates.push({ index: m.index!, context: m.context! });
        return;
      default:
        return;
    }
  }

  private handleAppend(m: Message): void {
    if (m.index! < this.log.committed) {
      this.send({ type: 'app-resp', to: m.from, index: this.log.committed });
      return;
    }
    const lastNew = this.log.maybeAppend(m.index!, m.logTerm!, m.commit ?? 0, m.entries ?? []);
    if (lastNew !== undefined) {
      this.caughtUpTo(lastNew);
      this.send({ type: 'app-resp', to: m.from, index: lastNew });
      return;
    }
    // Tell the leader where our logs can agree: the last index at or below its probe whose
    // term is not newer than its term there, so it skips a divergent term in one step.
    let hintIndex = Math.min(m.index!, this.log.lastIndex());
    hintIndex = this.log.findConflictByTerm(hintIndex, m.logTerm!);
    const hintTerm = this.log.term(hintIndex) ?? 0;
    this.send({
      type: 'app-resp',
      to: m.from,
      index: m.index,
      reject: true,
      rejectHint: hintIndex,
      logTerm: hintTerm,
    });
  }

  private handleSnapshot(m: Message): void {
    const s = m.snapshot!;
    if (this.restore(s)) this.send({ type: 'app-resp', to: m.from, index: this.log.lastIndex() });
    else this.send({ type: 'app-resp', to: m.from, index: this.log.committed });
  }

  private restore(s: Snapshot): boolean {
    if (s.meta.index <= this.log.committed) return false;
    if (this.log.matchTerm(s.meta.index, s.meta.term)) {
      // We already hold the snapshot's last entry: just fast-forward commit.
      this.log.commitTo(s.meta.index);
      this.caughtUpTo(s.meta.index);
      return false;
    }
    this.log.restore(s);
    this.caughtUpTo(s.meta.index);
    this.voterSet = new Set(s.meta.voters);
    this.sortedVoters = undefined;
    return true;
  }

  /**
   * The leader of our term found our log matching its own up to `index` (an append it sent
   * fitted, or its snapshot is ours). Every leader we accept is of a term at least that of any
   * entry we lost, so it holds whatever of those was committed: once it matched us past them,
   * our log holds them again, and our vote is safe.
   */
  private caughtUpTo(index: number): void {
    this.matchedLeader = true;
    if (this.catchUpTo > 0 && index >= this.catchUpTo) this.catchUpTo = 0;
  }

  // ---- roles ----

  private reset(term: number): void {
    if (term !== this.term) {
      this.term = term;
      this.vote = NONE;
      // A leader of a new term starts its progress of us afresh.
      this.matchedLeader = false;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.randomizedElectionTimeout = this.electionTicks + this.rng.int(this.electionTicks);
    this.leadTransferee = NONE;
    this.votes.clear();
    this.progress.clear();
    this.reads.reset();
    this.deferredReads = [];
  }

  private becomeFollower(term: number, lead: MemberId): void {
    this.reset(term);
    this.lead = lead;
    this.role = 'follower';
  }

  private becomePreCandidate(): void {
    // Pre-vote changes neither term nor vote: a partitioned member cannot inflate terms.
    this.votes.clear();
    this.lead = NONE;
    this.role = 'pre-candidate';
  }

  private becomeCandidate(): void {
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = 'candidate';
  }

  private becomeLeader(): void {
    this.reset(this.term);
    this.lead = this.id;
    this.role = 'leader';
    this.leaderTicks = 0;
    const last = this.log.lastIndex();
    for (const id of this.voterSet) {
      const pr = new Progress(last + 1, this.maxInflight);
      pr.recentActive = true;
      this.progress.set(id, pr);
    }
    this.progress.get(this.id)?.maybeUpdate(this.log.persistedIndex());
    // Entries of earlier terms may hide an unapplied membership change: no new change until
    // everything inherited is applied.
    this.pendingConfIndex = last;
    this.appendEntry('normal', null);
  }

  private hup(transfer: boolean): void {
    if (this.role === 'leader' || !this.voterSet.has(this.id)) return;
    // Its log may lack entries it acknowledged: it could win without one a majority committed.
    if (this.catchingUp()) return;
    // A committed but unapplied membership change may remove us or change the quorum.
    for (const e of this.log.slice(this.log.applied + 1, this.log.committed + 1) ?? []) {
      if (e.type === 'conf') return;
    }
    if (transfer) this.startElection(true);
    else this.startPreElection();
  }

  private startPreElection(): void {
    this.becomePreCandidate();
    this.requestVotes('pre-vote', this.term + 1, false);
  }

  private startElection(transfer: boolean): void {
    this.becomeCandidate();
    this.requestVotes('vote', this.term, transfer);
  }

  private requestVotes(type: 'vote' | 'pre-vote', term: number, transfer: boolean): void {
    this.votes.set(this.id, true);
    if (this.quorum() === 1) {
      if (type === 'pre-vote') this.startElection(transfer);
      else {
        this.becomeLeader();
        this.bcastAppend();
      }
      return;
    }
    for (const id of this.voters()) {
      if (id === this.id) continue;
      this.msgs.push({
        type,
        from: this.id,
        to: id,
        term,
        index: this.log.lastIndex(),
        logTerm: this.log.lastTerm(),
        context: transfer ? TRANSFER : undefined,
      });
    }
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (this.voterSet.has(this.id) && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.electionElapsed = 0;
      this.hup(false);
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    this.leaderTicks++;
    if (this.electionElapsed >= this.electionTicks) {
      this.electionElapsed = 0;
      // Check quorum: a leader that cannot hear a majority steps down instead of serving stale reads.
      if (!this.quorumActive()) {
        this.becomeFollower(this.term, NONE);
        return;
      }
      if (this.leadTransferee !== NONE) this.leadTransferee = NONE;
    }
    if (this.heartbeatElapsed >= this.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      this.bcastHeartbeat();
    }
  }

  private quorumActive(): boolean {
    let active = 0;
    for (const [id, pr] of this.progress) {
      if (!this.voterSet.has(id)) continue;
      if (id === this.id || pr.recentActive) active++;
      if (id !== this.id) pr.recentActive = false;
    }
    return active >= this.quorum();
  }

  // ---- leader replication ----

  private appendEntry(type: Entry['type'], data: unknown): Entry {
    const e: Entry = { term: this.term, index: this.log.lastIndex() + 1, type, data };
    this.log.append([e]);
    // Followers get it with the next Ready, so proposals arriving together travel in one
    // append per follower; our own copy counts once durable (advance).
    this.appendPending = true;
    return e;
  }

  /** Sends the entries appended since the last Ready (batched: one append per follower). */
  private flushAppends(): void {
    if (!this.appendPending) return;
    this.appendPending = false;
    if (this.role !== 'leader') return;
    for (const id of this.progress.keys()) {
      if (id === this.id) continue;
      while (this.sendAppend(id, false)) {
        /* fill the follower's window */
      }
    }
  }

  private maybeCommit(): boolean {
    const matches: number[] = [];
    for (const id of this.voterSet) {
      const pr = this.progress.get(id);
      matches.push(pr ? pr.match : 0);
    }
    matches.sort((a, b) => b - a);
    const index = matches[this.quorum() - 1] ?? 0;
    // The current-term rule: only an entry of our own term commits by counting replicas.
    if (!this.log.maybeCommit(index, this.term)) return false;
    if (this.deferredReads.length > 0 && this.committedInTerm()) {
      const reads = this.deferredReads;
      this.deferredReads = [];
      for (const r of reads) this.leaderReadIndex(r);
    }
    return true;
  }

  private committedInTerm(): boolean {
    return this.log.term(this.log.committed) === this.term;
  }

  private bcastAppend(): void {
    for (const id of this.progress.keys()) if (id !== this.id) this.sendAppend(id);
  }

  private bcastHeartbeat(readSeq = this.reads.lastSeq()): void {
    for (const [id, pr] of this.progress) {
      if (id === this.id) continue;
      this.msgs.push({
        type: 'heartbeat',
        from: this.id,
        to: id,
        term: this.term,
        // Never tell a follower to commit past what it is known to hold.
        commit: Math.min(pr.match, this.log.committed),
        readSeq: readSeq > 0 ? readSeq : undefined,
      });
    }
  }

  /**
   * Sends the next append (or a snapshot when the entries are compacted). With `sendIfEmpty`
   * false it only sends when there are entries, which is how pipelining fills the window.
   */
  private sendAppend(to: MemberId, sendIfEmpty = true): boolean {
    const pr = this.progress.get(to);
    if (!pr || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    const entries = this.log.entriesFrom(pr.next, this.maxEntries);
    if (prevTerm === undefined || entries === undefined) return this.sendSnapshot(to, pr);
    if (entries.length === 0 && !sendIfEmpty) return false;
    this.msgs.push({
      type: 'app',
      from: this.id,
      to,
      term: this.term,
      index: prevIndex,
      logTerm: prevTerm,
      entries,
      commit: this.log.committed,
    });
    if (entries.length > 0 && pr.state === 'replicate') {
      const last = entries[entries.length - 1].index;
      pr.next = last + 1;
      pr.inflights.add(last);
    } else if (pr.state === 'probe') {
      pr.probeSent = true;
    }
    return true;
  }

  private sendSnapshot(to: MemberId, pr: Progress): boolean {
    if (!pr.recentActive) return false;
    const snapshot = this.log.storage.snapshot();
    if (snapshot.meta.index === 0) {
      throw new RaftInvariantError(`entries for ${to} are compacted but there is no snapshot`);
    }
    this.msgs.push({ type: 'snap', from: this.id, to, term: this.term, snapshot });
    pr.becomeSnapshot(snapshot.meta.index, this.leaderTicks);
    return true;
  }

  // ---- reads ----

  private leaderReadIndex(m: Message): void {
    const context = m.context ?? '';
    if (this.quorum() === 1) {
      this.answerRead(m.from, this.log.committed, context);
      return;
    }
    // Until an entry of this term commits, our commit index may lag the real one.
    if (!this.committedInTerm()) {
      this.deferredReads.push(m);
      return;
    }
    const seq = this.reads.add({ from: m.from, index: this.log.committed, context }, this.id);
    this.bcastHeartbeat(seq);
  }

  private releaseReads(confirmed: { from: MemberId; index: number; context: string }[]): void {
    for (const r of confirmed) this.answerRead(r.from, r.index, r.context);
  }

  private answerRead(from: MemberId, index: number, context: string): void {
    if (from === this.id) this.readStates.push({ index, context });
    else this.send({ type: 'read-index-resp', to: from, index, context });
  }

  // ---- membership ----

  private applyConfChange(cc: ConfChange): void {
    this.voterSet = new Set(cc.voters);
    this.sortedVoters = undefined;
    if (this.role !== 'leader') return;
    for (const id of cc.voters) {
      if (!this.progress.has(id)) {
        const pr = new Progress(this.log.lastIndex() + 1, this.maxInflight);
        pr.recentActive = true;
        this.progress.set(id, pr);
      }
    }
    for (const id of [...this.progress.keys()])
      if (!this.voterSet.has(id)) this.progress.delete(id);
    if (!this.voterSet.has(this.id)) {
      // Removed: a leader outside the configuration must not keep leading it.
      this.becomeFollower(this.term, NONE);
      return;
    }
    if (this.leadTransferee !== NONE && !this.voterSet.has(this.leadTransferee))
      this.leadTransferee = NONE;
    // A smaller quorum may commit what was waiting.
    this.maybeCommit();
    this.bcastAppend();
  }

  // ---- helpers ----

  private send(m: Omit<Message, 'from' | 'term'> & { term?: number }): void {
    this.msgs.push({ ...m, from: this.id, term: m.term ?? this.term } as Message);
  }
}
