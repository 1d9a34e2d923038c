import {
  type Clock,
  type Timer,
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedEntry,
  type AppliedView,
  type Leadership,
  type LogPosition,
  type Membership,
  type MetadataConsensus,
  type ProposeOptions,
  type Receipt,
  type StateMachine,
  type MemberId,
} from '@baton/contracts';
import { commandFingerprint, IdempotencyWindow } from '@baton/consensus';

export interface FakeClusterOptions {
  /** The members, all voters at the start. The first (sorted) leads in term 1. */
  members: MemberId[];
  clock: Clock;
  /** How long forwarding to the leader and replication to a follower take (default 1 ms). */
  delayMs?: number;
  /** How long after its leader is isolated the majority elects another (default 100 ms). */
  electionTimeoutMs?: number;
  /** Default wait for a proposal stranded on an isolated leader (default 5,000 ms). */
  proposalTimeoutMs?: number;
  idempotencyWindow?: number;
  /**
   * How much later than the leader a follower applies each entry (default 0), as a Raft
   * follower learns the commit index only from the leader's next message. When set, a
   * follower's proposal is answered once the leader applied it, as forwarding does: the answer
   * can then arrive before the follower's own view shows the entry.
   */
  followerApplyLagMs?: number;
}

type LogEntry<C> =
  | { kind: 'command'; position: LogPosition; command: C; key?: string; fingerprint?: string }
  | { kind: 'membership'; position: LogPosition; voters: MemberId[] };

/**
 * Several members over one committed log, for tests that need more than one member (followers
 * that forward and lag, watchers everywhere, leadership moving, an isolated leader) without a
 * real consensus protocol: a leader that can reach the others commits at once, followers apply
 * `delayMs` later, an isolated member hears nothing until `heal`. It is deterministic on the
 * clock given. It is not a replication protocol and proves nothing about one: the Raft plugin
 * is tested by the conformance suite and its own simulation. As in LocalConsensus, watchers
 * are not called for membership entries, which carry no command.
 */
export class FakeCluster<S, C, R> {
  readonly clock: Clock;
  private readonly delayMs: number;
  private readonly electionTimeoutMs: number;
  readonly proposalTimeoutMs: number;
  readonly followerApplyLagMs: number;
  private readonly log: Array<LogEntry<C>> = [];
  private readonly window: IdempotencyWindow<R>;
  /** The committed state, kept by the cluster to decide results and idempotency at commit. */
  private readonly committed: S;
  private readonly results = new Map<number, R>();
  private readonly members = new Map<MemberId, FakeMember<S, C, R>>();
  private readonly isolated = new Set<MemberId>();
  private voters: MemberId[];
  private election?: Timer;
  term = 1;
  leaderId: MemberId;

  constructor(
    readonly machine: StateMachine<S, C, R>,
    options: FakeClusterOptions,
  ) {
    this.voters = [...new Set(options.members)].sort();
    if (this.voters.length === 0) throw new RangeError('a cluster needs at least one member');
    this.clock = options.clock;
    this.delayMs = options.delayMs ?? 1;
    this.electionTimeoutMs = options.electionTimeoutMs ?? 100;
    this.proposalTimeoutMs = options.proposalTimeoutMs ?? 5_000;
    this.followerApplyLagMs = options.followerApplyLagMs ?? 0;
    this.window = new IdempotencyWindow<R>(options.idempotencyWindow ?? 10_000);
    this.leaderId = this.voters[0];
    this.committed = machine.initial();
    for (const id of this.voters) this.members.set(id, new FakeMember(this, id, this.voters));
  }

  member(id: MemberId): FakeMember<S, C, R> {
    const member = this.members.get(id);
    if (!member)
      throw new RangeError(
        `no member ${id} in this cluster (members: ${[...this.members.keys()].join(', ')})`,
      );
    return member;
  }

  all(): Array<FakeMember<S, C, R>> {
    return [...this.members.values()];
  }

  /** Starts a new member, not a voter, that catches up from the log. */
  spawn(id: MemberId): FakeMember<S, C, R> {
    if (this.members.has(id)) throw new RangeError(`member ${id} already exists`);
    const member = new FakeMember(this, id, this.voters);
    this.members.set(id, member);
    this.replicateTo(member);
    return member;
  }

  isIsolated(id: MemberId): boolean {
    return this.isolated.has(id);
  }

  /** `id` hears nothing and reaches no one until `heal`; a leader is replaced after the election timeout. */
  isolate(id: MemberId): void {
    this.member(id);
    this.isolated.add(id);
    if (id === this.leaderId) this.scheduleElection();
  }

  heal(): void {
    this.isolated.clear();
    for (const member of this.members.values()) {
      member.learnLeadership();
      this.replicateTo(member);
    }
  }

  /** Moves leadership to the next reachable voter in a new term, as a leadership transfer does. */
  depose(): void {
    const candidates = this.voters.filter((v) => !this.isolated.has(v) && v !== this.leaderId);
    if (candidates.length === 0)
      throw new Error(`no other reachable voter can take over from ${this.leaderId}`);
    this.elect(candidates[0]);
  }

  /** True when `from` can reach the leader and the leader can reach a majority of voters. */
  canCommitFrom(from: MemberId): boolean {
    if (this.isolated.has(from) || this.isolated.has(this.leaderId)) return false;
    const reachable = this.voters.filter((v) => !this.isolated.has(v)).length;
    return reachable * 2 > this.voters.length;
  }

  get commitIndex(): number {
    return this.log.length;
  }

  entry(index: number): LogEntry<C> {
    return this.log[index - 1];
  }

  /** The leader's decision on a command: a replay, a refusal, or a new committed entry. */
  commit(
    command: C,
    key: string | undefined,
  ): { receipt: Receipt<R> } | { index: number } | { refused: NotAppendedError } {
    const fingerprint = key === undefined ? undefined : commandFingerprint(command);
    if (key !== undefined) {
      const known = this.window.lookup(key);
      if (known && known.fingerprint !== fingerprint) {
        return {
          refused: new NotAppendedError(
            'key_reused',
            `idempotency key ${JSON.stringify(key)} already decided a different command`,
          ),
        };
      }
      if (known)
        return {
          receipt: { position: { ...known.position }, result: known.result, replayed: true },
        };
    }
    const position = { term: this.term, index: this.log.length + 1 };
    this.log.push({ kind: 'command', position, command, key, fingerprint });
    const result = this.machine.apply(this.committed, structuredClone(command), {
      position: { ...position },
      voters: [...this.voters],
    });
    this.results.set(position.index, result);
    if (key !== undefined)
      this.window.remember(key, { fingerprint: fingerprint!, position, result });
    this.distribute();
    return { index: position.index };
  }

  commitMembership(member: MemberId, change: 'add' | 'remove'): number | undefined {
    const has = this.voters.includes(member);
    if ((change === 'add') === has) return undefined;
    this.voters =
      change === 'add' ? [...this.voters, member].sort() : this.voters.filter((v) => v !== member);
    const position = { term: this.term, index: this.log.length + 1 };
    this.log.push({ kind: 'membership', position, voters: [...this.voters] });
    this.machine.membershipChanged?.(this.committed, {
      position: { ...position },
      voters: [...this.voters],
    });
    this.distribute();
    return position.index;
  }

  /** The committed result of the command at `index`. */
  resultAt(index: number): R {
    return this.results.get(index) as R;
  }

  after(fn: () => void): void {
    this.clock.setTimer(this.delayMs, fn);
  }

  private distribute(): void {
    const leader = this.members.get(this.leaderId);
    leader?.catchUp();
    for (const member of this.members.values()) if (member !== leader) this.replicateTo(member);
  }

  private replicateTo(member: FakeMember<S, C, R>): void {
    this.clock.setTimer(this.delayMs + this.followerApplyLagMs, () => {
      if (!this.isolated.has(member.self)) member.catchUp();
    });
  }

  private scheduleElection(): void {
    this.election?.cancel();
    this.election = this.clock.setTimer(this.electionTimeoutMs, () => {
      if (!this.isolated.has(this.leaderId)) return;
      const reachable = this.voters.filter((v) => !this.isolated.has(v));
      if (reachable.length * 2 <= this.voters.length) return this.scheduleElection();
      this.elect(reachable[0]);
    });
  }

  private elect(leader: MemberId): void {
    this.term += 1;
    this.leaderId = leader;
    for (const member of this.members.values())
      if (!this.isolated.has(member.self)) member.learnLeadership();
  }
}

interface Waiting<R> {
  index: number;
  resolve(receipt: Receipt<R>): void;
}

/** One member of a FakeCluster: its own replica of the state machine, applied from the shared log. */
export class FakeMember<S, C, R> implements MetadataConsensus<S, C, R> {
  private state: S;
  private applied: LogPosition = { term: 0, index: 0 };
  private voters: MemberId[];
  private belief: { leader: MemberId; term: number };
  private stopped = false;
  private readonly watchers = new Set<(view: AppliedView<S>, entry: AppliedEntry<C, R>) => void>();
  private readonly leadershipListeners = new Set<(l: Leadership) => void>();
  private waiting: Array<Waiting<R>> = [];
  private readonly stranded = new Set<(error: OutcomeUnknownError) => void>();
  private readonly appliedWaiters: Array<{ index: number; resolve(): void }> = [];

  constructor(
    private readonly cluster: FakeCluster<S, C, R>,
    readonly self: MemberId,
    voters: MemberId[],
  ) {
    this.state = cluster.machine.initial();
    this.voters = [...voters];
    this.belief = { leader: cluster.leaderId, term: cluster.term };
  }

  propose(command: C, options: ProposeOptions = {}): Promise<Receipt<R>> {
    return new Promise<Receipt<R>>((resolve, reject) => {
      if (this.stopped)
        return reject(new NotAppendedError('stopped', `member ${this.self} is stopped`));
      if (options.signal?.aborted)
        return reject(new NotAppendedError('aborted', 'the signal was aborted before the proposal was submitted'));
      if (this.belief.leader === this.self && this.cluster.isIsolated(this.self)) {
        // A leader cut off from its followers appends locally, and the entry never commits.
        return this.strand(options, reject);
      }
      if (!this.cluster.canCommitFrom(this.self)) {
        return reject(
          new NotAppendedError(
            'no_leader',
            `member ${this.self} cannot reach a leader with a quorum`,
          ),
        );
      }
      const submit = () => {
        if (!this.cluster.canCommitFrom(this.self)) {
          return reject(
            new NotAppendedError(
              'no_leader',
              `the leader was unreachable when ${this.self} forwarded the proposal`,
            ),
          );
        }
        const decision = this.cluster.commit(command, options.idempotencyKey);
        if ('refused' in decision) return reject(decision.refused);
        if ('receipt' in decision) return resolve(decision.receipt);
        if (this.cluster.followerApplyLagMs > 0 && this.cluster.leaderId !== this.self) {
          // Answered from the leader, which applied it at commit; this member applies it later.
          const index = decision.index;
          return resolve({ position: { ...this.cluster.entry(index).position }, result: this.cluster.resultAt(index), replayed: false });
        }
        this.waitForApply(decision.index, resolve);
      };
      if (this.cluster.leaderId === this.self) submit();
      else this.cluster.after(submit);
    });
  }

  read(options: { signal?: AbortSignal } = {}): Promise<AppliedView<S>> {
    if (this.stopped)
      return Promise.reject(new ReadUnavailableError(`member ${this.self} is stopped`));
    if (options.signal?.aborted)
      return Promise.reject(new ReadUnavailableError('the signal was aborted'));
    if (!this.cluster.canCommitFrom(this.self)) {
      return Promise.reject(
        new ReadUnavailableError(`member ${this.self} cannot reach a leader with a quorum`),
      );
    }
    const target = this.cluster.commitIndex;
    return new Promise((resolve) => {
      const done = () => resolve(this.view());
      if (this.applied.index >= target) return done();
      this.appliedWaiters.push({ index: target, resolve: done });
    });
  }

  view(): AppliedView<S> {
    return { state: this.state, applied: { ...this.applied } };
  }

  watch(fn: (view: AppliedView<S>, entry: AppliedEntry<C, R>) => void): () => void {
    const subscription = (v: AppliedView<S>, e: AppliedEntry<C, R>) => fn(v, e);
    this.watchers.add(subscription);
    return () => void this.watchers.delete(subscription);
  }

  leadership(): Leadership {
    return {
      self: this.self,
      isLeader: this.belief.leader === this.self,
      leader: this.belief.leader,
      term: this.belief.term,
    };
  }

  onLeadership(fn: (l: Leadership) => void): () => void {
    const subscription = (l: Leadership) => fn(l);
    this.leadershipListeners.add(subscription);
    return () => void this.leadershipListeners.delete(subscription);
  }

  membership(): Membership {
    return { voters: [...this.voters] };
  }

  addVoter(member: MemberId, _options?: { signal?: AbortSignal }): Promise<void> {
    return this.changeMembership(member, 'add');
  }

  removeVoter(member: MemberId, _options?: { signal?: AbortSignal }): Promise<void> {
    return this.changeMembership(member, 'remove');
  }

  stop(): void {
    this.stopped = true;
    for (const fail of [...this.stranded])
      fail(new OutcomeUnknownError('stopped', `member ${this.self} stopped`));
  }

  /** Applies every committed entry not applied yet, in order, then answers who waited for them. */
  catchUp(): void {
    // A watcher that proposes commits re-entrantly; the loop below picks that entry up after
    // every watcher has seen the current one, so watch order stays log order.
    if (this.stopped || this.applying) return;
    this.applying = true;
    try {
      this.applyCommitted();
    } finally {
      this.applying = false;
    }
    this.answerWaiters();
  }

  private applying = false;

  private applyCommitted(): void {
    while (this.applied.index < this.cluster.commitIndex) {
      const entry = this.cluster.entry(this.applied.index + 1);
      if (entry.kind === 'membership') {
        this.voters = [...entry.voters];
        this.cluster.machine.membershipChanged?.(this.state, {
          position: { ...entry.position },
          voters: [...this.voters],
        });
        this.applied = { ...entry.position };
        continue;
      }
      const command = structuredClone(entry.command);
      const result = this.cluster.machine.apply(this.state, command, {
        position: { ...entry.position },
        voters: [...this.voters],
      });
      this.applied = { ...entry.position };
      const view = this.view();
      for (const watcher of [...this.watchers])
        watcher(view, { position: { ...entry.position }, command, result });
    }
  }

  private answerWaiters(): void {
    const ready = this.waiting.filter((w) => w.index <= this.applied.index);
    this.waiting = this.waiting.filter((w) => w.index > this.applied.index);
    for (const w of ready) {
      const position = { ...this.cluster.entry(w.index).position };
      w.resolve({ position, result: this.cluster.resultAt(w.index), replayed: false });
    }
    for (let i = this.appliedWaiters.length - 1; i >= 0; i--) {
      if (this.appliedWaiters[i].index <= this.applied.index)
        this.appliedWaiters.splice(i, 1)[0].resolve();
    }
  }

  /** Adopts the cluster's current leadership, telling listeners if it changed. */
  learnLeadership(): void {
    const { leaderId, term } = this.cluster;
    if (this.belief.leader === leaderId && this.belief.term === term) return;
    const wasLeader = this.belief.leader === this.self;
    this.belief = { leader: leaderId, term };
    if (wasLeader && leaderId !== this.self) {
      for (const fail of [...this.stranded])
        fail(
          new OutcomeUnknownError(
            'leadership_lost',
            `member ${this.self} lost leadership in term ${term}`,
          ),
        );
    }
    for (const listener of [...this.leadershipListeners]) listener(this.leadership());
  }

  private waitForApply(index: number, resolve: (r: Receipt<R>) => void): void {
    // The proposer answers once it has applied the entry itself, so a caller reads its write locally.
    this.waiting.push({ index, resolve });
    if (this.applied.index >= index) this.catchUp();
  }

  private strand(options: ProposeOptions, reject: (e: unknown) => void): void {
    const fail = (error: OutcomeUnknownError) => {
      this.stranded.delete(fail);
      timer.cancel();
      reject(error);
    };
    const timeoutMs = options.timeoutMs ?? this.cluster.proposalTimeoutMs;
    const timer = this.cluster.clock.setTimer(timeoutMs, () =>
      fail(new OutcomeUnknownError('timeout', `no commit within ${timeoutMs} ms`)),
    );
    this.stranded.add(fail);
  }

  private changeMembership(member: MemberId, change: 'add' | 'remove'): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.stopped)
        return reject(new NotAppendedError('stopped', `member ${this.self} is stopped`));
      if (!this.cluster.canCommitFrom(this.self)) {
        return reject(
          new NotAppendedError(
            'no_leader',
            `member ${this.self} cannot reach a leader with a quorum`,
          ),
        );
      }
      const index = this.cluster.commitMembership(member, change);
      if (index === undefined) return resolve();
      this.appliedWaiters.push({ index, resolve });
      if (this.applied.index >= index) this.catchUp();
    });
  }
}
