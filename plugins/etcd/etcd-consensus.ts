import { setMaxListeners } from 'node:events';
import type { Etcd3 } from 'etcd3';
import {
  type Clock,
  BatonError,
  type Logger,
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedEntry,
  type AppliedView,
  type Leadership,
  type Membership,
  type MetadataConsensus,
  type ProposeOptions,
  type Receipt,
  type StateMachine,
  type MemberId,
  type Rng,
} from '@baton/contracts';
import type { Lifecycle } from '@baton/kernel';
import { createEtcdClient, endpointHealthFor } from './etcd-client.js';
import type { EndpointHealth, EndpointStats } from './endpoint-health.js';
import { certainlyNotSent, describeEtcdError } from './etcd-errors.js';
import { LeaderElection } from './leader-election.js';
import { LogAppender, type AppendRequest } from './log-appender.js';
import {
  decodeEntry,
  encodeEntry,
  fingerprintOf,
  type BootstrapEntry,
  type CommandEntry,
  type VoterEntry,
} from './log-entry.js';
import { LogFollower, type FollowerSink } from './log-follower.js';
import { LogKeys } from './log-keys.js';
import type { EtcdConsensusOptions } from './options.js';
import { Replica, type ApplyOutcome, type ReplicaSnapshot } from './replica.js';
import { SnapshotStore } from './snapshot-store.js';
import { waitUntil } from './wait-until.js';

/** How long a committed entry may take to arrive by watch before the proposer reads the log itself. */
const WATCH_GRACE_MS = 250;

interface Waiter<C, R> {
  /** The sequence number the entry was appended at, once known. */
  seq?: number;
  key?: string;
  outcome?: ApplyOutcome<C, R> | { kind: 'folded' };
  settle(outcome: ApplyOutcome<C, R> | { kind: 'folded' }): void;
  settled: Promise<void>;
}

export interface EtcdConsensusDeps<S, C, R> {
  machine: StateMachine<S, C, R>;
  clock: Clock;
  rng: Rng;
  logger: Logger;
}

/**
 * MetadataConsensus on etcd. The log is a run of keys under the prefix, each appended by a
 * compare-and-put on the head counter, many entries per transaction (see LogAppender); every
 * member follows the log by watch and range reads (see LogFollower) and applies it to its own
 * replica of the state machine, so any member can propose and every member reaches the same
 * state. A position's index is the etcd revision of the commit, or one past the entry before it
 * when that is higher (entries of one transaction share a revision); its term is the leadership term (the election key's revision)
 * the proposer knew, never decreasing along the log, so positions and Leadership.term compare as
 * in Raft. etcd's own raft term is not used: it is only reported to the proposer, while a
 * position must be known alike on every member, and it does not move when leadership does.
 * Idempotency claims live in etcd beside the log and are taken in the append's transaction, so
 * a retry through any member finds the decision; the decisions themselves are in the replicas'
 * window, carried by snapshots. The leader stores snapshots and compacts the log beneath them.
 */
export class EtcdConsensus<S, C, R> implements MetadataConsensus<S, C, R>, Lifecycle {
  readonly self: MemberId;
  /** What an operator asks of a Raft member that this plugin cannot do, and what to do instead. */
  readonly capabilityGaps = {
    moveLeader:
      'its leader holds an etcd lease and no member can be named to take it over; stop the leader\'s process (or let its lease expire) and another voter takes the lease',
    exportSnapshot: 'the replicated log lives in etcd; back it up there (etcdctl snapshot save) and restore it with etcdutl snapshot restore',
  };
  private readonly keys: LogKeys;
  private readonly machine: StateMachine<S, C, R>;
  private readonly clock: Clock;
  private readonly rng: Rng;
  private readonly logger: Logger;
  private readonly replica: Replica<S, C, R>;
  /** Every waiting proposal listens on it (one listener each, removed when it ends): no listener cap. */
  private readonly stopSignal = unboundedAbortController();

  private client?: Etcd3;
  private endpointHealth?: EndpointHealth;
  private follower?: LogFollower;
  private appender?: LogAppender;
  private election?: LeaderElection;
  private snapshots?: SnapshotStore;

  private state: 'new' | 'starting' | 'running' | 'stopped' = 'new';
  private fatal: unknown;
  private readonly waiters = new Map<string, Waiter<C, R>>();
  private seqWaiters: Array<{ seq: number; wake(): void }> = [];
  private readonly watchers = new Set<(view: AppliedView<S>, entry: AppliedEntry<C, R>) => void>();
  private readonly leadershipListeners = new Set<(leadership: Leadership) => void>();
  private membershipInFlight = false;
  private snapshotting = false;
  private snapshotSeq = 0;
  /** The last stored snapshot whose log compaction and claim pruning have not finished yet. */
  private compactionOwed?: { seq: number; remembered: ReadonlySet<string> };

  constructor(
    private readonly options: EtcdConsensusOptions,
    deps: EtcdConsensusDeps<S, C, R>,
  ) {
    this.self = options.memberId;
    this.keys = new LogKeys(options.prefix);
    this.machine = deps.machine;
    this.clock = deps.clock;
    this.rng = deps.rng;
    this.logger = deps.logger.child({ plugin: 'etcd-consensus', member: options.memberId });
    this.replica = new Replica(deps.machine, options.idempotencyWindow);
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`etcd consensus ${this.self} was already started`);
    this.state = 'starting';
    const options = this.options;
    this.endpointHealth = endpointHealthFor(options, this.clock);
    const client = createEtcdClient(options, this.clock, this.endpointHealth);
    this.client = client;
    this.snapshots = new SnapshotStore(
      client,
      this.keys,
      options.snapshotChunkBytes,
      options.requestTimeoutMs,
      this.clock,
    );
    this.appender = new LogAppender(
      client,
      this.keys,
      options,
      this.clock,
      this.rng,
      this.logger,
      () => this.replica.seq,
      () => this.election?.leadership().term ?? 0,
      this.stopSignal.signal,
    );
    this.follower = new LogFollower(
      client,
      this.keys,
      this.snapshots,
      this.sink(),
      { pageSize: options.catchUpPageSize, ...options },
      this.clock,
      this.rng,
      this.logger,
    );
    this.election = new LeaderElection(
      client,
      this.keys,
      this.self,
      options,
      this.clock,
      this.rng,
      this.logger,
    );
    try {
      await this.retryUntilStarted('create the log', () => this.bootstrap());
      await this.retryUntilStarted('read the log', () => this.follower!.start());
      const manifest = await this.retryUntilStarted('read the snapshot manifest', () =>
        this.snapshots!.manifest(),
      );
      this.snapshotSeq = manifest.manifest?.seq ?? 0;
    } catch (error) {
      this.state = 'stopped';
      this.stopSignal.abort();
      await this.follower.stop();
      client.close();
      throw error;
    }
    this.election.onChange((leadership) => this.announceLeadership(leadership));
    this.election.start();
    this.election.setCandidate(this.replica.voters.includes(this.self));
    // Entries carry the leadership term, so learn it before proposing (a group with no live
    // voter has none: start anyway, entries then carry the term of the log so far).
    await this.election.leaderKnown(options.leaseTtlSeconds * 1000 + options.requestTimeoutMs);
    this.state = 'running';
    this.logger.info(
      { seq: this.replica.seq, voters: this.replica.voters },
      'following the consensus log in etcd',
    );
  }

  /**
   * Stops following the log and resigns leadership. Proposals not yet sent end NotAppended
   * ('stopped'), proposals in doubt or committed but not yet applied end OutcomeUnknown('stopped').
   */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.stopSignal.abort();
    await this.election?.stop();
    await this.follower?.stop();
    for (const waiter of this.seqWaiters) waiter.wake();
    this.seqWaiters = [];
    this.client?.close();
  }

  // ---- the contract --------------------------------------------------------------------------

  async propose(command: C, options: ProposeOptions = {}): Promise<Receipt<R>> {
    const refusal = this.refusal();
    if (refusal) throw refusal;
    if (options.signal?.aborted) {
      throw new NotAppendedError(
        'aborted',
        'the signal was aborted before the proposal was submitted',
      );
    }
    const key = options.idempotencyKey;
    if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 512)) {
      throw new TypeError(
        `idempotencyKey must be a string of 1 to 512 characters, got ${JSON.stringify(key)}`,
      );
    }
    const fingerprint = key === undefined ? undefined : fingerprintOf(command);
    if (key !== undefined) {
      const known = this.replica.decision(key);
      if (known && known.fingerprint !== fingerprint) throw keyReused(key);
      if (known) return { position: { ...known.position }, result: known.result, replayed: true };
    }
    if (this.appender!.pending >= this.options.maxPendingProposals) {
      throw new NotAppendedError(
        'queue_saturated',
        `member ${this.self} already has ${this.appender!.pending} proposals waiting for etcd; retry later`,
      );
    }
    const entry: CommandEntry = {
      kind: 'command',
      id: this.newId(),
      term: 0,
      command,
      key,
      fingerprint,
    };
    this.checkSize(entry);
    const deadline = this.clock.now() + (options.timeoutMs ?? this.options.proposeTimeoutMs);
    const waiter = this.addWaiter(entry.id, key);
    try {
      let claim: AppendRequest['claim'] =
        key === undefined ? undefined : { key, fingerprint: fingerprint! };
      for (;;) {
        const appended = await this.appender!.append({
          entry,
          claim,
          deadline,
          signal: options.signal,
        });
        if (appended.kind === 'claimed') {
          // The key is claimed by another entry: its decision is ours once this member applied it.
          const decided = await this.decisionOf(key!, appended.claim.seq, deadline, options.signal);
          if (decided.kind === 'expired') {
            // The window forgot the key: the old claim is stale and a new command may take it.
            claim = {
              key: key!,
              fingerprint: fingerprint!,
              replaceModRevision: appended.modRevision,
            };
            continue;
          }
          if (decided.kind === 'receipt') return decided.receipt;
          throw decided.error;
        }
        if (waiter.outcome) return this.receiptOf(waiter);
        if (appended.kind === 'not_appended')
          throw new NotAppendedError(appended.reason, appended.detail);
        if (appended.kind === 'unknown')
          throw new OutcomeUnknownError(appended.reason, appended.detail);
        waiter.seq = appended.seq;
        await this.awaitApplied(waiter, appended.seq, appended.revision, deadline, options.signal);
        return this.receiptOf(waiter);
      }
    } finally {
      this.waiters.delete(entry.id);
    }
  }

  async read(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<AppliedView<S>> {
    if (this.state !== 'running') throw new ReadUnavailableError(this.stoppedDetail());
    const deadline = this.clock.now() + (options.timeoutMs ?? this.options.readTimeoutMs);
    let delay = this.options.retryMinMs;
    let lastProblem = 'no attempt finished';
    for (;;) {
      if (options.signal?.aborted) throw new ReadUnavailableError('the signal was aborted');
      if (this.state !== 'running') throw new ReadUnavailableError(this.stoppedDetail());
      const now = this.clock.now();
      if (now >= deadline) {
        throw new ReadUnavailableError(
          `etcd did not answer a linearizable read in time: ${lastProblem}`,
        );
      }
      try {
        // A linearizable get of the head: every entry committed before this call is at or below it.
        const head = await this.client!.get(this.keys.head)
          .options({ deadline: new Date(Math.min(deadline, now + this.options.requestTimeoutMs)) })
          .string();
        const seq = head === null ? 0 : Number(head);
        const reached = await this.reachSeq(seq, deadline, options.signal);
        if (reached) return this.view();
        lastProblem = `the log up to entry ${seq} was not applied here in time`;
      } catch (error) {
        lastProblem = describeEtcdError(error);
        await waitUntil(this.clock.sleep(delay), {
          clock: this.clock,
          deadline,
          signal: options.signal,
          stop: this.stopSignal.signal,
        });
        delay = Math.min(this.options.retryMaxMs, delay * 2);
      }
    }
  }

  view(): AppliedView<S> {
    return { state: this.replica.state, applied: { ...this.replica.applied } };
  }

  watch(fn: (view: AppliedView<S>, entry: AppliedEntry<C, R>) => void): () => void {
    const subscription = (view: AppliedView<S>, entry: AppliedEntry<C, R>) => fn(view, entry);
    this.watchers.add(subscription);
    return () => void this.watchers.delete(subscription);
  }

  leadership(): Leadership {
    return this.election?.leadership() ?? { self: this.self, isLeader: false, term: 0 };
  }

  onLeadership(fn: (leadership: Leadership) => void): () => void {
    const subscription = (leadership: Leadership) => fn(leadership);
    this.leadershipListeners.add(subscription);
    return () => void this.leadershipListeners.delete(subscription);
  }

  /** Where this member's etcd requests went, per endpoint, and which ones it avoids now. */
  endpoints(): EndpointStats[] {
    return this.endpointHealth?.stats() ?? [];
  }

  membership(): Membership {
    return { voters: [...this.replica.voters] };
  }

  addVoter(member: MemberId, options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.changeVoters('add', member, options.signal);
  }

  removeVoter(member: MemberId, options: { signal?: AbortSignal; expectedVoters?: readonly MemberId[] } = {}): Promise<void> {
    // The voters as this member has applied them: etcd keeps the log, so the check is as fresh as
    // this replica (the change itself is then one transaction among the others).
    if (options.expectedVoters && [...this.replica.voters].sort().join('\n') !== [...options.expectedVoters].sort().join('\n')) {
      return Promise.reject(
        new NotAppendedError('membership_changed', `the voters are ${[...this.replica.voters].sort().join(', ')}, not the ${[...options.expectedVoters].sort().join(', ')} the change was checked against`),
      );
    }
    return this.changeVoters('remove', member, options.signal);
  }

  /**
   * Gives up leadership, if this member holds it, and stands again behind the other voters:
   * another voter leads in a higher term. For maintenance of this member's host.
   */
  async resign(): Promise<void> {
    await this.election?.stepDown();
  }

  /** The error thrown by the state machine (or a broken log) that stopped this member, if any. */
  get failure(): unknown {
    return this.fatal;
  }

  /** The sequence number of the last entry applied here (for tests and diagnostics). */
  get appliedSeq(): number {
    return this.replica.seq;
  }

  // ---- proposals -----------------------------------------------------------------------------

  private async changeVoters(
    change: 'add' | 'remove',
    member: MemberId,
    signal?: AbortSignal,
  ): Promise<void> {
    if (typeof member !== 'string' || member.length === 0) {
      throw new TypeError(
        `${change}Voter needs a non-empty member id, got ${JSON.stringify(member)}`,
      );
    }
    const refusal = this.refusal();
    if (refusal) throw refusal;
    if (signal?.aborted) {
      throw new OutcomeUnknownError(
        'aborted',
        'the signal was aborted before the change was submitted',
      );
    }
    const isVoter = this.replica.voters.includes(member);
    // Already in the wanted shape: nothing to append (a retried change is harmless).
    if ((change === 'add' && isVoter) || (change === 'remove' && !isVoter)) return;
    if (change === 'remove' && this.replica.voters.length === 1) throw lastVoter(member);
    if (this.membershipInFlight) {
      throw new NotAppendedError(
        'membership_change_in_progress',
        `member ${this.self} is already changing the voters; wait for that change to finish`,
      );
    }
    this.membershipInFlight = true;
    const entry: VoterEntry = { kind: 'voters', id: this.newId(), term: 0, change, voter: member };
    const deadline = this.clock.now() + this.options.proposeTimeoutMs;
    const waiter = this.addWaiter(entry.id);
    try {
      const appended = await this.appender!.append({ entry, deadline, signal });
      if (!waiter.outcome) {
        if (appended.kind === 'not_appended')
          throw new NotAppendedError(appended.reason, appended.detail);
        if (appended.kind === 'unknown')
          throw new OutcomeUnknownError(appended.reason, appended.detail);
        if (appended.kind === 'claimed') throw new Error('a voter change claims no key');
        waiter.seq = appended.seq;
        await this.awaitApplied(waiter, appended.seq, appended.revision, deadline, signal);
      }
      const outcome = waiter.outcome!;
      if (outcome.kind === 'voters' && outcome.refusal) throw lastVoter(member);
    } finally {
      this.waiters.delete(entry.id);
      this.membershipInFlight = false;
    }
  }

  /** Waits until this member applied the entry at `seq`; reads the log itself if the watch is late. */
  private async awaitApplied(
    waiter: Waiter<C, R>,
    seq: number,
    revision: number,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const wait = (until: number) =>
      waitUntil(waiter.settled, {
        clock: this.clock,
        deadline: until,
        signal,
        stop: this.stopSignal.signal,
      });
    let end = await wait(Math.min(deadline, this.clock.now() + WATCH_GRACE_MS));
    while (end.kind === 'timeout' && this.clock.now() < deadline) {
      void this.follower!.sync().catch(() => undefined);
      end = await wait(Math.min(deadline, this.clock.now() + WATCH_GRACE_MS * 4));
    }
    if (end.kind === 'done') return;
    const where = `committed as log entry ${seq} at revision ${revision}`;
    if (end.kind === 'aborted') {
      throw new OutcomeUnknownError(
        'aborted',
        `${where}; the signal was aborted before it was applied here`,
      );
    }
    if (end.kind === 'stopped') {
      throw new OutcomeUnknownError('stopped', `${where}; the member stopped before applying it`);
    }
    throw new OutcomeUnknownError(
      'timeout',
      `${where}, but not applied on member ${this.self} in time (is the watch on etcd down?)`,
    );
  }

  /** What the log decided under `key`, claimed by entry `seq`, once this member applied it. */
  private async decisionOf(
    key: string,
    seq: number,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<
    { kind: 'receipt'; receipt: Receipt<R> } | { kind: 'error'; error: Error } | { kind: 'expired' }
  > {
    const reached = await this.reachSeq(seq, deadline, signal);
    if (!reached) {
      if (signal?.aborted)
        return {
          kind: 'error',
          error: new OutcomeUnknownError('aborted', 'the signal was aborted'),
        };
      if (this.stopSignal.signal.aborted) {
        return { kind: 'error', error: new OutcomeUnknownError('stopped', this.stoppedDetail()) };
      }
      // Nothing of this proposal was appended; the earlier claim's decision is just not known yet.
      return {
        kind: 'error',
        error: new NotAppendedError(
          'no_leader',
          `idempotency key ${JSON.stringify(key)} is claimed by log entry ${seq}, which this member did not apply in time; retry`,
        ),
      };
    }
    const known = this.replica.decision(key);
    if (!known) return { kind: 'expired' };
    return {
      kind: 'receipt',
      receipt: { position: { ...known.position }, result: known.result, replayed: true },
    };
  }

  /** Resolves true once the replica applied `seq`, reading the log if the watch lags; false at the deadline. */
  private async reachSeq(seq: number, deadline: number, signal?: AbortSignal): Promise<boolean> {
    if (this.replica.seq >= seq) return true;
    const reached = new Promise<void>((wake) => this.seqWaiters.push({ seq, wake }));
    let end = await waitUntil(reached, {
      clock: this.clock,
      deadline: Math.min(deadline, this.clock.now() + WATCH_GRACE_MS),
      signal,
      stop: this.stopSignal.signal,
    });
    while (end.kind === 'timeout' && this.clock.now() < deadline && this.replica.seq < seq) {
      void this.follower!.sync().catch(() => undefined);
      end = await waitUntil(reached, {
        clock: this.clock,
        deadline: Math.min(deadline, this.clock.now() + WATCH_GRACE_MS * 4),
        signal,
        stop: this.stopSignal.signal,
      });
    }
    return this.replica.seq >= seq && this.state === 'running';
  }

  private receiptOf(waiter: Waiter<C, R>): Receipt<R> {
    const outcome = waiter.outcome!;
    switch (outcome.kind) {
      case 'applied':
        return { position: { ...outcome.position }, result: outcome.result, replayed: false };
      case 'replayed':
        return {
          position: { ...outcome.decision.position },
          result: outcome.decision.result,
          replayed: true,
        };
      case 'key_reused':
        throw keyReused(outcome.key);
      case 'folded': {
        const known = waiter.key === undefined ? undefined : this.replica.decision(waiter.key);
        if (known)
          return { position: { ...known.position }, result: known.result, replayed: false };
        throw new OutcomeUnknownError(
          'timeout',
          `the entry was committed, then folded into a snapshot before member ${this.self} applied it; its result is not known here`,
        );
      }
      default:
        throw new OutcomeUnknownError(
          'timeout',
          `the entry was applied as ${outcome.kind}, not as a command`,
        );
    }
  }

  private addWaiter(id: string, key?: string): Waiter<C, R> {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const waiter: Waiter<C, R> = {
      key,
      settled,
      settle: (outcome) => {
        if (waiter.outcome) return;
        waiter.outcome = outcome;
        settle();
      },
    };
    this.waiters.set(id, waiter);
    return waiter;
  }

  private checkSize(entry: CommandEntry): void {
    const bytes = Buffer.byteLength(encodeEntry(entry));
    if (bytes > this.options.maxEntryBytes) {
      throw new BatonError(
        'consensus.entry_too_large',
        `the command's log entry is ${bytes} bytes, over maxEntryBytes (${this.options.maxEntryBytes}): keep commands small and put bulk data in the object store`,
      );
    }
  }

  private newId(): string {
    return `${this.self}.${this.rng.hex(12)}`;
  }

  private refusal(): NotAppendedError | undefined {
    if (this.state === 'running') return undefined;
    return new NotAppendedError('stopped', this.stoppedDetail());
  }

  private stoppedDetail(): string {
    if (this.fatal !== undefined) {
      return `member ${this.self} stopped because it cannot follow the log: ${String(this.fatal)}`;
    }
    return this.state === 'new' || this.state === 'starting'
      ? `member ${this.self} is not started`
      : `member ${this.self} is stopped`;
  }

  // ---- applying ------------------------------------------------------------------------------

  private sink(): FollowerSink {
    const replica = this.replica;
    return {
      get appliedSeq() {
        return replica.seq;
      },
      applyEntry: (seq, revision, value) => this.applyEntry(seq, revision, value),
      restoreSnapshot: (snapshot) => this.restoreSnapshot(snapshot),
      fail: (error) => this.failMember(error),
    };
  }

  private applyEntry(seq: number, revision: number, value: Buffer): void {
    const outcome = this.replica.apply(seq, revision, decodeEntry(value));
    switch (outcome.kind) {
      case 'applied':
        this.notifyWatchers({
          position: outcome.position,
          command: outcome.command,
          result: outcome.result,
        });
        this.waiters.get(outcome.id)?.settle(outcome);
        break;
      case 'replayed':
      case 'key_reused':
        this.waiters.get(outcome.id)?.settle(outcome);
        break;
      case 'voters':
        this.waiters.get(outcome.id)?.settle(outcome);
        if (outcome.changed) this.election?.setCandidate(this.replica.voters.includes(this.self));
        break;
      case 'bootstrap':
        break;
      case 'skipped':
        this.logger.warn(
          { seq, reason: outcome.reason },
          'skipped a log entry that is not a valid command',
        );
        break;
    }
    this.wakeSeqWaiters();
    this.maybeSnapshot();
  }

  private restoreSnapshot(snapshot: ReplicaSnapshot): void {
    this.replica.restore(snapshot);
    this.snapshotSeq = Math.max(this.snapshotSeq, snapshot.seq);
    for (const waiter of this.waiters.values()) {
      if (waiter.seq !== undefined && waiter.seq <= snapshot.seq) waiter.settle({ kind: 'folded' });
    }
    if (this.state === 'running')
      this.election?.setCandidate(this.replica.voters.includes(this.self));
    this.wakeSeqWaiters();
  }

  private failMember(error: unknown): void {
    this.fatal = error;
    this.logger.error({ error: String(error) }, 'stopping: this member cannot follow the log');
    void this.stop();
  }

  private wakeSeqWaiters(): void {
    if (this.seqWaiters.length === 0) return;
    const seq = this.replica.seq;
    const ready = this.seqWaiters.filter((waiter) => waiter.seq <= seq);
    this.seqWaiters = this.seqWaiters.filter((waiter) => waiter.seq > seq);
    for (const waiter of ready) waiter.wake();
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

  private announceLeadership(leadership: Leadership): void {
    for (const listener of [...this.leadershipListeners]) {
      try {
        listener({ ...leadership });
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    if (leadership.isLeader) this.maybeSnapshot();
  }

  // ---- snapshots -----------------------------------------------------------------------------

  /**
   * The leader stores a snapshot every `snapshotEveryEntries` entries and compacts below it.
   * Called on every apply and on gaining leadership; an apply that lands while a snapshot is
   * being written is not lost: the check runs again when that snapshot ends, so a quiet log
   * still gets the snapshot (and the pruning) its last entries made due.
   */
  private maybeSnapshot(): void {
    if (this.snapshotting || this.state !== 'running') return;
    if (!this.election?.leadership().isLeader) return;
    const due = this.replica.seq - this.snapshotSeq >= this.options.snapshotEveryEntries;
    if (!due && !this.compactionOwed) return;
    this.snapshotting = true;
    void this.snapshotAndCompact(due).then(
      (progressed) => {
        this.snapshotting = false;
        if (progressed) this.maybeSnapshot();
      },
      (error: unknown) => {
        this.snapshotting = false;
        this.logger.warn(
          { error: describeEtcdError(error) },
          'could not store a snapshot or compact the log; will try again',
        );
        // Not only on the next entry: a log that stays quiet must still get its snapshot.
        this.clock.sleep(this.options.retryMaxMs, this.stopSignal.signal).then(
          () => this.maybeSnapshot(),
          () => undefined,
        );
      },
    );
  }

  /**
   * Stores a snapshot (when `due`), then compacts the log and prunes the claims beneath the last
   * stored one. A compaction that failed after its snapshot was stored stays owed and is retried
   * without another snapshot. Resolves whether anything moved on (false when another writer's
   * snapshot won the race, so the caller does not spin on it).
   */
  private async snapshotAndCompact(due: boolean): Promise<boolean> {
    if (due) {
      const snapshot = this.replica.snapshot();
      const current = await this.snapshots!.manifest();
      const stored = await this.snapshots!.write(snapshot, current, this.rng.hex(6));
      if (!stored) {
        this.snapshotSeq = Math.max(this.snapshotSeq, current.manifest?.seq ?? 0);
        return false;
      }
      this.snapshotSeq = snapshot.seq;
      this.compactionOwed = {
        seq: snapshot.seq,
        remembered: new Set(snapshot.window.map(([key]) => key)),
      };
    }
    const owed = this.compactionOwed;
    if (!owed) return false;
    await this.snapshots!.compactLog(owed.seq - this.options.retainEntriesAfterSnapshot);
    const pruned = await this.snapshots!.pruneClaims(owed.seq, owed.remembered);
    if (this.compactionOwed === owed) this.compactionOwed = undefined;
    this.logger.info({ seq: owed.seq, pruned }, 'stored a snapshot and compacted the log');
    return true;
  }

  // ---- start ---------------------------------------------------------------------------------

  /** Writes the log's first entry (the initial voters) unless the log exists. */
  private async bootstrap(): Promise<void> {
    const voters = this.options.initialVoters ?? [this.self];
    const entry: BootstrapEntry = { kind: 'bootstrap', voters: [...new Set(voters)].sort() };
    const client = this.client!;
    const result = await client
      .if(this.keys.head, 'Version', '==', 0)
      .then(
        client.put(this.keys.head).value('1'),
        client.put(this.keys.entry(1)).value(encodeEntry(entry)),
      )
      .else(client.get(this.keys.entry(1)))
      .options({ deadline: new Date(this.clock.now() + this.options.requestTimeoutMs) })
      .commit();
    if (result.succeeded) {
      this.logger.info({ voters: entry.voters }, 'created the consensus log');
      return;
    }
    const first = result.responses[0]?.response_range.kvs[0];
    const existing = first ? decodeEntry(first.value) : undefined;
    if (
      this.options.initialVoters &&
      existing?.kind === 'bootstrap' &&
      existing.voters.join() !== entry.voters.join()
    ) {
      this.logger.warn(
        { configured: entry.voters, log: existing.voters },
        'initialVoters differ from the existing log; the log decides (change voters with addVoter/removeVoter)',
      );
    }
  }

  /** Retries a start step while etcd is unreachable, up to proposeTimeoutMs. */
  private async retryUntilStarted<T>(what: string, step: () => Promise<T>): Promise<T> {
    const deadline = this.clock.now() + this.options.proposeTimeoutMs;
    let delay = this.options.retryMinMs;
    for (;;) {
      try {
        return await step();
      } catch (error) {
        const transient =
          certainlyNotSent(error) || /unavailable|deadline|timed out/i.test(String(error));
        if (!transient || this.clock.now() + delay >= deadline) {
          throw new BatonError(
            'consensus.etcd_unavailable',
            `member ${this.self} could not ${what} in etcd at ${this.options.endpoints.join(', ')}: ${describeEtcdError(error)}. ` +
              'Check that etcd runs and that the endpoints, credentials and prefix are right.',
            { cause: error },
          );
        }
        await this.clock.sleep(delay);
        delay = Math.min(this.options.retryMaxMs, delay * 2);
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

function lastVoter(member: MemberId): BatonError {
  return new BatonError(
    'membership.last_voter',
    `cannot remove ${member}: it is the last voter, and a group needs one`,
  );
}

function unboundedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
