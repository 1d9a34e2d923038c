import {
  type Clock,
  type Timer,
  BatonError,
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedEntry,
  type AppliedView,
  type ApplyContext,
  type Leadership,
  type LogPosition,
  type Membership,
  type MetadataConsensus,
  type ProposeOptions,
  type Receipt,
  type StateMachine,
  type MemberId,
} from '@baton/contracts';
import { commandFingerprint, IdempotencyWindow, type IdempotencyWindowSnapshot } from '@baton/consensus';

export interface LocalConsensusOptions {
  /** This member's id (default "local"). */
  self?: MemberId;
  /** The term new entries are appended in (default 1). */
  term?: number;
  /** Initial voters (default: just `self`). Other ids are bookkeeping only: nobody answers for them. */
  voters?: MemberId[];
  /** How many idempotency keys are remembered (default 10,000; the oldest is forgotten first). */
  idempotencyWindow?: number;
  /**
   * Needed only for `timeoutMs` on held proposals: without a clock nothing here ever times out,
   * because the fake never arms a timer of its own.
   */
  clock?: Clock;
}

/** An injected failure for the next proposal; see `failNext`. */
export interface InjectedFailure {
  error: NotAppendedError | OutcomeUnknownError;
  /** Apply the command first, then lose the answer ("appended but the answer was lost"). */
  afterApply: boolean;
}

/** Everything a LocalConsensus needs to resume where another left off. JSON-serialisable. */
export interface LocalConsensusSnapshot {
  applied: LogPosition;
  term: number;
  voters: MemberId[];
  state: unknown;
  idempotency: IdempotencyWindowSnapshot<unknown>;
}

interface PendingProposal<C, R> {
  command: C;
  key?: string;
  fingerprint?: string;
  resolve(receipt: Receipt<R>): void;
  reject(error: unknown): void;
  /** Undoes the abort listener and timeout once the caller has its answer. */
  cleanup(): void;
}

const DEFAULT_WINDOW = 10_000;

/**
 * A single-member MetadataConsensus over any StateMachine, for unit tests of the variants.
 * It keeps the whole contract (positions, idempotent replay, key reuse refused, watch in log
 * order, view/read, leadership, membership) with no network, no timers and no randomness:
 * `propose` applies synchronously, before its promise settles. Fault injection lets a test
 * reach the paths a real cluster only reaches under faults: `failNext` (refused, or applied but
 * the answer lost), `hold`/`release` (a proposal stuck in consensus, to cancel it),
 * `setLeadership` (leadership lost or regained) and `stop`.
 */
export class LocalConsensus<S, C, R> implements MetadataConsensus<S, C, R> {
  readonly self: MemberId;
  private state: S;
  private applied: LogPosition = { term: 0, index: 0 };
  private lead: Leadership;
  private voters: MemberId[];
  private idempotency: IdempotencyWindow<R>;
  private readonly clock?: Clock;

  private readonly watchers = new Set<(view: AppliedView<S>, entry: AppliedEntry<C, R>) => void>();
  private readonly leadershipListeners = new Set<(leadership: Leadership) => void>();
  private readonly failures: InjectedFailure[] = [];
  private readonly entries: AppliedEntry<C, R>[] = [];

  private holding = false;
  private held: PendingProposal<C, R>[] = [];
  private heldWaiters: Array<{ count: number; resolve(): void }> = [];

  private stopped = false;
  private fatal: unknown;

  // Applies run one at a time, in order: a watcher that proposes from inside its callback gets
  // its entry applied after every watcher has seen the current one, never in the middle.
  private readonly applyQueue: Array<() => void> = [];
  private draining = false;

  constructor(
    private readonly machine: StateMachine<S, C, R>,
    options: LocalConsensusOptions = {},
  ) {
    this.self = options.self ?? 'local';
    const term = options.term ?? 1;
    if (!Number.isInteger(term) || term < 1)
      throw new RangeError(`term must be an integer >= 1, got ${term}`);
    this.voters = sortedUnique(options.voters ?? [this.self]);
    if (this.voters.length === 0) throw new RangeError('voters must name at least one member');
    this.lead = { self: this.self, isLeader: true, leader: this.self, term };
    this.idempotency = new IdempotencyWindow<R>(options.idempotencyWindow ?? DEFAULT_WINDOW);
    this.clock = options.clock;
    this.state = machine.initial();
  }

  /** A member that resumes from `snapshot` (e.g. to test that decisions survive a snapshot). */
  static fromSnapshot<S, C, R>(
    machine: StateMachine<S, C, R>,
    snapshot: LocalConsensusSnapshot,
    options: Omit<LocalConsensusOptions, 'term' | 'voters'> = {},
  ): LocalConsensus<S, C, R> {
    const member = new LocalConsensus(machine, {
      ...options,
      term: snapshot.term,
      voters: snapshot.voters,
    });
    member.state = machine.restore(structuredClone(snapshot.state));
    member.applied = { ...snapshot.applied };
    member.idempotency = IdempotencyWindow.restore(
      options.idempotencyWindow ?? DEFAULT_WINDOW,
      structuredClone(snapshot.idempotency) as IdempotencyWindowSnapshot<R>,
    );
    return member;
  }

  // ---- the contract ------------------------------------------------------------------------

  propose(command: C, options: ProposeOptions = {}): Promise<Receipt<R>> {
    return new Promise<Receipt<R>>((resolve, reject) => {
      const refusal = this.refusal();
      if (refusal) return reject(refusal);
      if (options.signal?.aborted) {
        // Nothing was submitted, so the command certainly was not appended.
        return reject(
          new NotAppendedError('aborted', 'the signal was aborted before the proposal was submitted'),
        );
      }
      const key = options.idempotencyKey;
      const fingerprint = key === undefined ? undefined : commandFingerprint(command);
      if (key !== undefined) {
        const known = this.idempotency.lookup(key);
        if (known && known.fingerprint !== fingerprint) return reject(keyReused(key));
        if (known)
          return resolve({ position: { ...known.position }, result: known.result, replayed: true });
      }

      const failure = this.failures.shift();
      if (failure) {
        if (failure.afterApply) {
          this.enqueueApply(() => this.applyProposal({ command, key, fingerprint, ...detached() }));
        }
        return reject(failure.error);
      }

      const proposal: PendingProposal<C, R> = {
        command,
        key,
        fingerprint,
        resolve,
        reject,
        cleanup: () => {},
      };
      if (!this.holding) return this.enqueueApply(() => this.applyProposal(proposal));
      this.holdProposal(proposal, options);
    });
  }

  read(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<AppliedView<S>> {
    if (this.stopped) return Promise.reject(new ReadUnavailableError(this.stoppedDetail()));
    if (!this.lead.isLeader) {
      return Promise.reject(
        new ReadUnavailableError(`member ${this.self} is not the leader and knows none to ask`),
      );
    }
    if (options.signal?.aborted)
      return Promise.reject(new ReadUnavailableError('the signal was aborted'));
    // Held proposals are not committed, so a read does not wait for them.
    return Promise.resolve(this.view());
  }

  view(): AppliedView<S> {
    return { state: this.state, applied: { ...this.applied } };
  }

  /**
   * Membership changes take a log position but carry no command, so watchers are not called
   * for them (AppliedEntry has no place for one): a watcher can see `applied.index` skip one.
   */
  watch(fn: (view: AppliedView<S>, entry: AppliedEntry<C, R>) => void): () => void {
    // Wrapped so the same function can be subscribed twice and unsubscribed independently.
    const subscription = (view: AppliedView<S>, entry: AppliedEntry<C, R>) => fn(view, entry);
    this.watchers.add(subscription);
    return () => void this.watchers.delete(subscription);
  }

  leadership(): Leadership {
    return { ...this.lead };
  }

  onLeadership(fn: (leadership: Leadership) => void): () => void {
    const subscription = (l: Leadership) => fn(l);
    this.leadershipListeners.add(subscription);
    return () => void this.leadershipListeners.delete(subscription);
  }

  membership(): Membership {
    return { voters: [...this.voters] };
  }

  addVoter(member: MemberId, options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.changeMembership(member, 'add', options.signal);
  }

  removeVoter(member: MemberId, options: { signal?: AbortSignal; expectedVoters?: readonly MemberId[] } = {}): Promise<void> {
    if (options.expectedVoters && this.voters.join('\n') !== sortedUnique([...options.expectedVoters]).join('\n')) {
      return Promise.reject(new NotAppendedError('membership_changed', `the voters are ${this.voters.join(', ')}, not ${[...options.expectedVoters].sort().join(', ')}`));
    }
    return this.changeMembership(member, 'remove', options.signal);
  }

  // ---- fault injection and test controls -----------------------------------------------------

  /**
   * The next proposal that passes validation fails with `error`. With `afterApply` the command
   * is applied first (and remembered under its idempotency key), so a retry with the same key
   * learns the decision: the "appended, but the answer was lost" case. Failures queue up in order.
   */
  failNext(
    error: NotAppendedError | OutcomeUnknownError,
    options: { afterApply?: boolean } = {},
  ): void {
    if (!(error instanceof NotAppendedError) && !(error instanceof OutcomeUnknownError)) {
      throw new TypeError(
        'failNext takes a NotAppendedError or an OutcomeUnknownError, the errors propose may raise',
      );
    }
    const afterApply = options.afterApply ?? false;
    if (afterApply && error instanceof NotAppendedError) {
      throw new TypeError(
        'failNext: a NotAppendedError promises the command was not appended, so it cannot come after applying it; ' +
          'use an OutcomeUnknownError to simulate a lost answer',
      );
    }
    this.failures.push({ error, afterApply });
  }

  /** From now on proposals wait "in consensus" (not applied, not answered) until `release`. */
  hold(): void {
    this.holding = true;
  }

  /**
   * Stops holding and commits every held proposal in arrival order. Proposals whose caller gave
   * up (abort, timeout) are committed too: giving up only stops the wait, as with a real log.
   */
  release(): void {
    this.holding = false;
    const released = this.held;
    this.held = [];
    for (const proposal of released) this.enqueueApply(() => this.applyProposal(proposal));
  }

  /** Fails every held proposal with `error` without applying it (the entries were lost). */
  dropHeld(
    error: NotAppendedError | OutcomeUnknownError = new OutcomeUnknownError(
      'leadership_lost',
      'the held proposals were dropped',
    ),
  ): void {
    const dropped = this.held;
    this.held = [];
    for (const proposal of dropped) {
      proposal.cleanup();
      proposal.reject(error);
    }
  }

  /** How many proposals are held right now. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Resolves once at least `count` proposals are held: wait on this, never on a sleep. */
  whenHeld(count = 1): Promise<void> {
    if (this.held.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.heldWaiters.push({ count, resolve }));
  }

  /**
   * Changes leadership and tells every onLeadership listener. The term moves forward by one
   * unless given (it may never go back). Losing leadership fails the held proposals with
   * OutcomeUnknownError('leadership_lost'), as a deposed leader would.
   */
  setLeadership(change: { isLeader: boolean; leader?: MemberId; term?: number }): void {
    const term = change.term ?? this.lead.term + 1;
    if (!Number.isInteger(term) || term < this.lead.term) {
      throw new RangeError(
        `term must be an integer >= the current term ${this.lead.term}, got ${term}`,
      );
    }
    const leader = change.leader ?? (change.isLeader ? this.self : undefined);
    if (change.isLeader && leader !== this.self) {
      throw new RangeError(`a leader leads itself: isLeader is true but leader is ${leader}`);
    }
    this.lead = { self: this.self, isLeader: change.isLeader, leader, term };
    if (!change.isLeader) {
      this.dropHeld(
        new OutcomeUnknownError(
          'leadership_lost',
          `member ${this.self} lost leadership in term ${term}`,
        ),
      );
    }
    this.announceLeadership();
  }

  /**
   * Stops the member: held proposals fail with OutcomeUnknownError('stopped'), new proposals
   * with NotAppendedError('stopped'), reads with ReadUnavailableError. Idempotent.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.dropHeld(
      new OutcomeUnknownError(
        'stopped',
        `member ${this.self} stopped while the proposal was in flight`,
      ),
    );
  }

  /** The error thrown by the state machine's apply, which stopped this member, if any. */
  get failure(): unknown {
    return this.fatal;
  }

  /** Every entry applied so far, in log order (membership changes excluded). */
  log(): ReadonlyArray<AppliedEntry<C, R>> {
    return this.entries;
  }

  snapshot(): LocalConsensusSnapshot {
    return {
      applied: { ...this.applied },
      term: this.lead.term,
      voters: [...this.voters],
      state: this.machine.snapshot(this.state),
      idempotency: this.idempotency.snapshot(),
    };
  }

  // ---- internals ------------------------------------------------------------------------------

  /** Why a new proposal (or membership change) is refused before anything is appended, if it is. */
  private refusal(): NotAppendedError | undefined {
    if (this.stopped) return new NotAppendedError('stopped', this.stoppedDetail());
    if (!this.lead.isLeader) {
      return new NotAppendedError(
        'no_leader',
        `member ${this.self} is not the leader and knows none to forward to`,
      );
    }
    return undefined;
  }

  private stoppedDetail(): string {
    return this.fatal === undefined
      ? `member ${this.self} is stopped`
      : `member ${this.self} stopped because the state machine threw: ${String(this.fatal)}`;
  }

  private holdProposal(proposal: PendingProposal<C, R>, options: ProposeOptions): void {
    let timer: Timer | undefined;
    const signal = options.signal;
    const onAbort = () => {
      proposal.cleanup();
      proposal.reject(
        new OutcomeUnknownError(
          'aborted',
          'the signal was aborted while the proposal was in consensus',
        ),
      );
    };
    proposal.cleanup = () => {
      timer?.cancel();
      signal?.removeEventListener('abort', onAbort);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs !== undefined && this.clock) {
      timer = this.clock.setTimer(options.timeoutMs, () => {
        proposal.cleanup();
        proposal.reject(
          new OutcomeUnknownError('timeout', `no decision within ${options.timeoutMs} ms`),
        );
      });
    }
    this.held.push(proposal);
    const ready = this.heldWaiters.filter((w) => this.held.length >= w.count);
    this.heldWaiters = this.heldWaiters.filter((w) => this.held.length < w.count);
    for (const waiter of ready) waiter.resolve();
  }

  private enqueueApply(job: () => void): void {
    this.applyQueue.push(job);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let next = this.applyQueue.shift(); next; next = this.applyQueue.shift()) next();
    } finally {
      this.draining = false;
    }
  }

  private applyProposal(proposal: PendingProposal<C, R>): void {
    proposal.cleanup();
    if (this.stopped) return proposal.reject(new NotAppendedError('stopped', this.stoppedDetail()));
    const { key, fingerprint } = proposal;
    if (key !== undefined) {
      // Two proposals under one key can both be in flight; the first to commit decides.
      const known = this.idempotency.lookup(key);
      if (known && known.fingerprint !== fingerprint) return proposal.reject(keyReused(key));
      if (known)
        return proposal.resolve({
          position: { ...known.position },
          result: known.result,
          replayed: true,
        });
    }
    const position = { term: this.lead.term, index: this.applied.index + 1 };
    let result: R;
    try {
      result = this.machine.apply(this.state, proposal.command, this.context(position));
    } catch (error) {
      this.fatal = error;
      this.stop();
      return proposal.reject(error);
    }
    this.applied = position;
    if (key !== undefined)
      this.idempotency.remember(key, { fingerprint: fingerprint!, position, result });
    const entry: AppliedEntry<C, R> = { position, command: proposal.command, result };
    this.entries.push(entry);
    this.notifyWatchers(entry);
    proposal.resolve({ position: { ...position }, result, replayed: false });
  }

  private changeMembership(
    member: MemberId,
    change: 'add' | 'remove',
    signal?: AbortSignal,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const refusal = this.refusal();
      if (refusal) return reject(refusal);
      if (signal?.aborted)
        return reject(
          new OutcomeUnknownError(
            'aborted',
            'the signal was aborted before the change was submitted',
          ),
        );
      if (typeof member !== 'string' || member.length === 0) {
        return reject(
          new TypeError(
            `${change}Voter needs a non-empty member id, got ${JSON.stringify(member)}`,
          ),
        );
      }
      const isVoter = this.voters.includes(member);
      // Already in the wanted shape: nothing to append (a retried change is harmless).
      if ((change === 'add' && isVoter) || (change === 'remove' && !isVoter)) return resolve();
      if (change === 'remove' && this.voters.length === 1) {
        return reject(
          new BatonError(
            'membership.last_voter',
            `cannot remove ${member}: it is the last voter, and a group needs one`,
          ),
        );
      }
      this.enqueueApply(() => {
        if (this.stopped) return reject(new NotAppendedError('stopped', this.stoppedDetail()));
        const voters =
          change === 'add'
            ? sortedUnique([...this.voters, member])
            : this.voters.filter((v) => v !== member);
        const position = { term: this.lead.term, index: this.applied.index + 1 };
        this.voters = voters;
        try {
          this.machine.membershipChanged?.(this.state, this.context(position));
        } catch (error) {
          this.fatal = error;
          this.stop();
          return reject(error);
        }
        this.applied = position;
        resolve();
        // A leader that removed itself steps down once the change commits, as in Raft.
        if (change === 'remove' && member === this.self)
          this.setLeadership({ isLeader: false, term: this.lead.term });
      });
    });
  }

  private context(position: LogPosition): ApplyContext {
    return { position: { ...position }, voters: [...this.voters] };
  }

  private notifyWatchers(entry: AppliedEntry<C, R>): void {
    const view = this.view();
    for (const watcher of [...this.watchers]) {
      try {
        watcher(view, entry);
      } catch (error) {
        // A watcher's bug must not stop the log nor hide: it surfaces as an uncaught error.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  private announceLeadership(): void {
    for (const listener of [...this.leadershipListeners]) {
      const snapshot = this.leadership();
      try {
        listener(snapshot);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

function keyReused(key: string): NotAppendedError {
  return new NotAppendedError(
    'key_reused',
    `idempotency key ${JSON.stringify(key)} already decided a different command; use a new key for a new command`,
  );
}

function sortedUnique(members: readonly MemberId[]): MemberId[] {
  return [...new Set(members)].sort();
}

/** Settlement functions for an apply whose answer nobody waits for. */
function detached(): Pick<PendingProposal<never, never>, 'resolve' | 'reject' | 'cleanup'> {
  return { resolve: () => {}, reject: () => {}, cleanup: () => {} };
}
