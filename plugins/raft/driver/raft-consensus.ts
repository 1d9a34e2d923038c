import {
  type Clock,
  type Timer,
  type Logger,
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedEntry,
  type AppliedView,
  type Leadership,
  type Membership,
  type MembershipDetails,
  type ConsensusSnapshot,
  type MetadataConsensus,
  type ProposeOptions,
  type Receipt,
  type StateMachine,
  type MemberId,
  type PeerMessage,
  type PeerTransport,
} from '@baton/contracts';
import { RaftCore } from '../core/raft.js';
import { MemoryLogStorage } from '../core/storage.js';
import { mustSync } from '../core/must-sync.js';
import {
  NONE,
  type Entry,
  type HardState,
  type Message,
  type Ready,
  type Snapshot,
  type SnapshotMeta,
} from '../core/types.js';
import type { RaftStorage } from '../storage/raft-storage.js';
import { valueDepthExceeds } from '@baton/http';
import { commandFingerprint } from '@baton/consensus';
import { Deadlines } from './deadlines.js';
import { PendingProposal, Waiters, type Waiter } from './waiter.js';
import { DEFAULT_TUNING, type RaftConsensusOptions, type RaftTuning } from './options.js';
import {
  ReplicatedState,
  snapshotInImageForm,
  type AssembledState,
  type CommandData,
} from './replicated-state.js';
import { MAX_COMMAND_DEPTH, PROPOSE_CHANNEL, RAFT_CHANNEL, hasRequiredFields, parseRaftEnvelope } from './wire.js';
import {
  SNAPSHOT_CHANNEL,
  SnapshotReceiver,
  SnapshotSender,
  parseSnapshotBody,
} from './snapshot-transfer.js';
import { ForwardedProposals, Forwarder, responseError } from './forwarding.js';
import { MembershipChanges } from './membership.js';
import { RaftAdministration } from './raft-admin.js';

interface PendingRead<S> {
  index?: number;
  resolve(view: AppliedView<S>): void;
  reject(error: Error): void;
}

/** Counters an operator (and the tests) can read: what was dropped and why. */
export interface RaftConsensusStats {
  malformedMessages: number;
  foreignMessages: number;
  snapshotsTaken: number;
  snapshotsInstalled: number;
  /** Snapshots whose writing failed (the member tries again after another interval). */
  snapshotFailures: number;
  /** Chunks of snapshots sent to followers, and taken from a leader. */
  snapshotChunksSent: number;
  snapshotChunksReceived: number;
  persists: number;
  /** Times the loop handed the event loop back in the middle of a backlog. */
  loopYields: number;
}

/** A one-shot outcome: the first settle wins, later ones are ignored. */
function once<T>(fn: (value: T) => void): (value: T) => void {
  let done = false;
  return (value) => {
    if (done) return;
    done = true;
    fn(value);
  };
}

/**
 * MetadataConsensus over the pure Raft core: drives it with the injected clock (ticks), persists
 * every Ready before sending its messages (etcd's rule), applies committed entries to the
 * replicated state (the variant's state machine plus the idempotency window), and answers
 * proposals, reads and membership changes. Followers forward proposals to the leader on the
 * "raft-propose" channel; Raft messages travel on "raft". Inputs that arrive while a Ready is
 * being persisted wait in an inbox, so the core sees one input at a time.
 */
export class RaftConsensus<S, C, R> implements MetadataConsensus<S, C, R> {
  readonly self: MemberId;
  private readonly tuning: RaftTuning;
  private readonly cluster: string;
  private readonly machine: StateMachine<S, C, R>;
  private readonly storage: RaftStorage;
  private readonly transport: PeerTransport;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly bootstrapVoters: MemberId[];
  private readonly options: RaftConsensusOptions<S, C, R>;

  private core!: RaftCore;
  private mem!: MemoryLogStorage;
  private rs!: ReplicatedState<S, C, R>;
  private lastSnapshotIndex = 0;
  /** A snapshot of our own state being written in the background, at this index. */
  private snapshotWriting: Promise<void> | undefined;
  private snapshotWritingAt = 0;
  /** Written and durable: the loop puts it in force and compacts the log between two Readies. */
  private snapshotWritten: Snapshot | undefined;
  /** A leader's snapshot assembled here and handed to the core, with its assembled state. */
  private installing: { snapshot: Snapshot; from: MemberId; term: number; assembled: AssembledState<S, R> } | undefined;
  private snapshotSender!: SnapshotSender;
  private snapshotReceiver!: SnapshotReceiver<AssembledState<S, R>>;

  /** The hard state last written, and a newer commit-only one not written yet. */
  private durableHardState: HardState = { term: 0, vote: '', commit: 0 };
  private deferredHardState: HardState | undefined;

  private readonly inbox: Array<() => void> = [];
  private looping = false;
  private idle: Promise<void> = Promise.resolve();
  private tickTimer: Timer | undefined;
  private ticks = 0;
  private unlisten: Array<() => void> = [];
  private state: 'new' | 'running' | 'stopped' = 'new';
  private fatal: Error | undefined;

  /** Proposals at this member not yet decided: queued for the core or appended and waiting. */
  private queued = 0;
  /** Per log index, the head of the list of who waits for that entry. */
  private readonly waiters = new Waiters();
  /** Keyed proposals appended by this leader and not yet applied: a retry joins them. */
  private readonly inFlightKeys = new Map<string, { fingerprint: string; index: number }>();
  /** Proposals this follower sent to the leader (forwarding.ts). */
  private readonly forwarder: Forwarder;
  /** Proposals followers sent to this member while it leads (forwarding.ts). */
  private readonly forwarded: ForwardedProposals;
  /** addVoter and removeVoter (membership.ts). */
  private readonly membershipChanges: MembershipChanges;
  /** Member details, leader moves and exported snapshots (raft-admin.ts). */
  private readonly admin: RaftAdministration;
  /** Deadlines of the proposals at this member, swept every tick. */
  private readonly deadlines = new Deadlines();
  private readonly releaseQueued = () => {
    this.queued--;
  };
  private readonly reads = new Map<string, PendingRead<S>>();
  private readSeq = 0;

  private readonly watchers = new Set<(view: AppliedView<S>, entry: AppliedEntry<C, R>) => void>();
  private readonly leadershipListeners = new Set<(leadership: Leadership) => void>();
  private readonly leadershipWaiters = new Set<() => void>();
  private lastLeadership: Leadership;
  readonly stats: RaftConsensusStats = {
    malformedMessages: 0,
    foreignMessages: 0,
    snapshotsTaken: 0,
    snapshotsInstalled: 0,
    snapshotFailures: 0,
    snapshotChunksSent: 0,
    snapshotChunksReceived: 0,
    persists: 0,
    loopYields: 0,
  };

  constructor(options: RaftConsensusOptions<S, C, R>) {
    this.options = options;
    this.self = options.self;
    this.tuning = { ...DEFAULT_TUNING, ...definedOnly(options) };
    this.cluster = options.cluster ?? 'baton';
    this.machine = options.machine;
    this.storage = options.storage;
    this.transport = options.transport;
    this.clock = options.clock;
    this.log = options.logger.child({ plugin: 'raft', member: options.self });
    this.bootstrapVoters = [...new Set(options.voters)].sort();
    if (this.bootstrapVoters.length === 0) {
      throw new RangeError(
        'raft needs at least one bootstrap voter: list the cluster members in "voters"',
      );
    }
    this.lastLeadership = { self: this.self, isLeader: false, term: 0 };
    this.forwarder = new Forwarder(
      this.transport,
      this.clock,
      this.tuning.tickMs,
      () => this.state === 'running',
    );
    this.membershipChanges = new MembershipChanges({
      self: this.self,
      cluster: this.cluster,
      clock: this.clock,
      deadlines: this.deadlines,
      forwarder: this.forwarder,
      timeoutMs: this.tuning.proposeTimeoutMs,
      leaderWaitMs: this.tuning.tickMs * this.tuning.electionTicks,
      assertRunning: (what) => this.assertRunning(what),
      running: () => this.state === 'running',
      isLeader: () => this.core.role === 'leader',
      knownLeader: () => (this.core.lead === NONE ? undefined : this.core.lead),
      voters: () => this.core.voters(),
      appliedPosition: () => this.rs.applied,
      enqueue: (input) => this.enqueue(input),
      proposeConfChange: (change) => this.core.proposeConfChange(change),
      addWaiter: (index, term, w) => this.addWaiter(index, term, w),
      waitForLeadershipChange: (ms, signal) => this.waitForLeadershipChange(ms, signal),
    });
    this.admin = new RaftAdministration({
      self: this.self,
      cluster: this.cluster,
      clock: this.clock,
      transport: this.transport,
      electionTimeoutMs: this.tuning.tickMs * this.tuning.electionTicks,
      running: () => this.state === 'running',
      leadership: () => this.leadership(),
      onLeadership: (fn) => this.onLeadership(fn),
      voters: () => this.core.voters(),
      progressOf: (member) => this.core.progressOf(member),
      applied: () => this.rs.applied.index,
      enqueue: (input) => this.enqueue(input),
      transferLeader: (member) => this.core.transferLeader(member),
      read: (o) => this.read(o),
      captureApplied: () => {
        const index = this.rs.applied.index;
        return { index, term: this.mem.term(index) ?? this.rs.applied.term, voters: [...this.rs.voters], image: this.rs.capture() };
      },
    });
    this.forwarded = new ForwardedProposals({
      self: this.self,
      cluster: this.cluster,
      maxTimeoutMs: this.tuning.proposeTimeoutMs * 4,
      stats: this.stats,
      clock: this.clock,
      leading: () => this.state === 'running' && this.core.role === 'leader',
      appliedPosition: () => this.rs.applied,
      proposeHere: (data, now, timeoutMs, signal) => this.proposeHere(data, now, timeoutMs, signal),
      changeHere: (change, member, timeoutMs, expectedVoters) =>
        this.membershipChanges.changeHere(change, member, timeoutMs, expectedVoters),
    });
  }

  // ---- lifecycle ----

  async start(): Promise<void> {
    if (this.state !== 'new')
      throw new Error(`raft member ${this.self} cannot start: it is ${this.state}`);
    const recovered = await this.storage.load();
    this.mem = new MemoryLogStorage(this.bootstrapVoters);
    this.rs = new ReplicatedState(
      this.machine,
      this.tuning.idempotencyWindow,
      this.bootstrapVoters,
    );
    if (recovered.snapshot) {
      const snapshot = snapshotInImageForm(recovered.snapshot);
      this.mem.applySnapshot(snapshot);
      this.rs.restore(snapshot);
      this.lastSnapshotIndex = snapshot.meta.index;
      this.snapshotWritingAt = snapshot.meta.index;
    }
    const usable = recovered.entries.filter((e) => e.index > this.mem.lastIndex());
    this.mem.append(usable);
    this.durableHardState = recovered.hardState;
    this.mem.setHardState({
      ...recovered.hardState,
      commit: Math.min(
        Math.max(recovered.hardState.commit, this.mem.firstIndex() - 1),
        this.mem.lastIndex(),
      ),
    });
    this.core = new RaftCore({
      id: this.self,
      storage: this.mem,
      rng: this.options.rng,
      electionTicks: this.tuning.electionTicks,
      heartbeatTicks: this.tuning.heartbeatTicks,
      maxInflight: this.tuning.maxInflight,
      maxEntriesPerMessage: this.tuning.maxEntriesPerMessage,
      maxCommittedPerReady: this.tuning.maxCommittedPerReady,
    });
    this.lastLeadership = this.currentLeadership();
    this.startSnapshotTransfers();
    this.unlisten.push(
      this.transport.listen(RAFT_CHANNEL, { onMessage: (from, m) => this.onRaftMessage(from, m) }),
      this.transport.listen(SNAPSHOT_CHANNEL, {
        onMessage: (from, m) => this.onSnapshotMessage(from, m),
      }),
      this.transport.listen(PROPOSE_CHANNEL, {
        onMessage: () => this.stats.malformedMessages++,
        onRequest: (from, m) => this.forwarded.answer(from, m),
      }),
      this.admin.listen(),
    );
    this.state = 'running';
    // Alone in the configuration: nobody else can lead, so there is nothing to wait out.
    const voters = this.core.voters();
    if (voters.length === 1 && voters[0] === this.self) this.core.campaign();
    this.log.info(
      {
        term: this.core.term,
        commit: this.core.log.committed,
        last: this.core.log.lastIndex(),
        voters: this.rs.voters,
      },
      'raft member started',
    );
    if (this.core.catchingUp()) {
      this.log.warn(
        { catchUpTo: recovered.hardState.catchUpTo },
        'this member\'s log was repaired: it neither votes nor campaigns until a leader has matched its log up to that index',
      );
    }
    this.scheduleTick();
    this.kick();
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    const wasRunning = this.state === 'running';
    this.state = 'stopped';
    this.tickTimer?.cancel();
    for (const off of this.unlisten) off();
    this.unlisten = [];
    this.forwarder.abortAll(new OutcomeUnknownError('stopped', `member ${this.self} stopped`));
    this.failWaiters(
      () =>
        new OutcomeUnknownError(
          'stopped',
          `member ${this.self} stopped before the entry was applied`,
        ),
    );
    for (const [, r] of this.reads)
      r.reject(new ReadUnavailableError(`member ${this.self} stopped`));
    this.reads.clear();
    for (const w of this.leadershipWaiters) w();
    // Queued inputs run once more so queued proposals learn they were never appended.
    while (this.inbox.length > 0) this.inbox.shift()!();
    this.resumeLoop?.();
    if (wasRunning) await this.idle;
    // A snapshot still being written finishes (or fails) before its storage closes.
    await this.snapshotWriting;
    this.installing = undefined;
    this.snapshotReceiver?.abandon();
    await this.storage.close();
    this.log.info('raft member stopped');
  }

  // ---- the contract ----

  propose(command: C, options?: ProposeOptions): Promise<Receipt<R>> {
    // A command every member must encode for its log: one that cannot be would stop them all.
    const invalid = unloggableCommand(command);
    if (invalid) return Promise.reject(invalid);
    // The common case under load, on the leader without a signal, skips the general path's
    // async frame: one promise and one object per proposal (PendingProposal).
    if (
      options?.signal === undefined &&
      this.state === 'running' &&
      this.core.role === 'leader' &&
      this.queued < this.tuning.maxQueue
    ) {
      const timeoutMs = options?.timeoutMs ?? this.tuning.proposeTimeoutMs;
      const key = options?.idempotencyKey;
      let fingerprint: string | undefined;
      if (key !== undefined) {
        try {
          fingerprint = commandFingerprint(command);
        } catch {
          return this.proposeAnywhere(command, options ?? {});
        }
        const known = this.rs.window.lookup(key);
        if (known && known.fingerprint !== fingerprint) return Promise.reject(keyReused(key));
        if (known) {
          return Promise.resolve({
            position: { ...known.position },
            result: known.result as R,
            replayed: true,
          });
        }
      }
      if (timeoutMs > 0) {
        this.queued++;
        return new Promise<Receipt<unknown> | 'retry'>((resolve, reject) => {
          const p = new PendingProposal(
            'proposal',
            timeoutMs,
            this.deadlines,
            this.clock.now(),
            undefined,
            resolve,
            reject,
            this.releaseQueued,
            this.proposeElsewhere,
            command,
            key,
            fingerprint,
          );
          this.enqueue(() => this.appendProposal(p, p));
        }) as Promise<Receipt<R>>;
      }
    }
    return this.proposeAnywhere(command, options ?? {});
  }

  /** A fast-path proposal that found this member no longer leading: the general path, in its time left. */
  private readonly proposeElsewhere = (p: PendingProposal): Promise<Receipt<unknown>> =>
    this.proposeAnywhere(p.command as C, {
      timeoutMs: p.deadlineAt - this.clock.now(),
      idempotencyKey: p.key,
    });

  private async proposeAnywhere(command: C, options: ProposeOptions): Promise<Receipt<R>> {
    this.assertRunning('propose');
    const timeoutMs = options.timeoutMs ?? this.tuning.proposeTimeoutMs;
    // One clock read per attempt: reading the clock showed in the profile.
    let now = this.clock.now();
    const deadline = now + timeoutMs;
    const key = options.idempotencyKey;
    const fingerprint = key === undefined ? undefined : commandFingerprint(command);
    if (key !== undefined) {
      const known = this.rs.window.lookup(key);
      if (known && known.fingerprint !== fingerprint) throw keyReused(key);
      if (known) return { position: { ...known.position }, result: known.result, replayed: true };
    }
    if (options.signal?.aborted)
      throw new NotAppendedError(
        'aborted',
        'the signal was aborted before the proposal was submitted',
      );
    for (; ; now = this.clock.now()) {
      const remaining = deadline - now;
      if (remaining <= 0)
        throw new NotAppendedError(
          'no_leader',
          `no leader accepted the proposal within ${timeoutMs} ms`,
        );
      if (this.core.role === 'leader') {
        const outcome = await this.proposeHere(
          { command, key, fingerprint },
          now,
          remaining,
          options.signal,
        );
        if (outcome !== 'retry') return outcome as Receipt<R>;
      } else if (this.core.lead !== NONE) {
        const response = await this.forwarder.request(
          this.core.lead,
          { kind: 'command', cluster: this.cluster, command, key, timeoutMs: remaining },
          remaining,
          options.signal,
        );
        if (response.ok)
          return {
            position: response.position,
            result: response.result as R,
            replayed: response.replayed,
          };
        if (!(response.kind === 'not_appended' && response.reason === 'no_leader'))
          throw responseError(response);
      }
      // No leader known, or the one we asked no longer leads: wait for news, then try again.
      await this.waitForLeadershipChange(
        Math.min(deadline - this.clock.now(), this.tuning.tickMs * this.tuning.electionTicks),
        options.signal,
      );
    }
  }

  async read(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<AppliedView<S>> {
    if (this.state !== 'running')
      throw new ReadUnavailableError(`member ${this.self} is ${this.state}`);
    const timeoutMs = options.timeoutMs ?? this.tuning.readTimeoutMs;
    const context = `${this.self}:${++this.readSeq}`;
    return new Promise<AppliedView<S>>((resolve, reject) => {
      const timer = this.clock.setTimer(timeoutMs, () =>
        done(new ReadUnavailableError(`no leader confirmed a read index within ${timeoutMs} ms`)),
      );
      const onAbort = () => done(new ReadUnavailableError('the read was aborted'));
      const done = once((outcome: AppliedView<S> | Error) => {
        timer.cancel();
        options.signal?.removeEventListener('abort', onAbort);
        this.reads.delete(context);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      });
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.reads.set(context, { resolve: done, reject: done });
      this.enqueue(() => this.core.readIndex(context));
    });
  }

  view(): AppliedView<S> {
    return { state: this.rs.state, applied: { ...this.rs.applied } };
  }

  watch(fn: (view: AppliedView<S>, entry: AppliedEntry<C, R>) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  leadership(): Leadership {
    return { ...this.lastLeadership };
  }

  onLeadership(fn: (leadership: Leadership) => void): () => void {
    this.leadershipListeners.add(fn);
    return () => this.leadershipListeners.delete(fn);
  }

  membership(): Membership {
    return { voters: [...this.rs.voters] };
  }

  async addVoter(member: MemberId, options: { signal?: AbortSignal; address?: string } = {}): Promise<void> {
    if (options.address !== undefined) await this.admin.announcePeer(member, options.address);
    return this.membershipChanges.change('add', member, options.signal);
  }

  members(options: { timeoutMs?: number } = {}): Promise<MembershipDetails> {
    this.assertRunning('members');
    return this.admin.members(options);
  }

  moveLeader(member: MemberId, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Leadership> {
    this.assertRunning('moveLeader');
    return this.admin.moveLeader(member, options);
  }

  exportSnapshot(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ConsensusSnapshot> {
    this.assertRunning('exportSnapshot');
    return this.admin.exportSnapshot(options);
  }

  removeVoter(member: MemberId, options: { signal?: AbortSignal; expectedVoters?: readonly MemberId[] } = {}): Promise<void> {
    return this.membershipChanges.change('remove', member, options.signal, options.expectedVoters);
  }

  /** Raft state, for status pages and tests. */
  status(): {
    term: number;
    role: string;
    lead: MemberId;
    commit: number;
    applied: number;
    lastIndex: number;
    snapshotIndex: number;
  } {
    return {
      term: this.core.term,
      role: this.core.role,
      lead: this.core.lead,
      commit: this.core.log.committed,
      applied: this.rs.applied.index,
      lastIndex: this.core.log.lastIndex(),
      snapshotIndex: this.lastSnapshotIndex,
    };
  }

  /** Hands leadership to `member` (TimeoutNow once it has caught up). Only meaningful on the leader. */
  transferLeadership(member: MemberId): void {
    this.enqueue(() => this.core.transferLeader(member));
  }

  // ---- proposals ----

  /**
   * Appends on this member, which believes it leads. Resolves with the receipt once applied,
   * or 'retry' when it turned out not to lead (nothing was appended).
   */
  private proposeHere(
    data: { command: unknown; key?: string; fingerprint?: string },
    now: number,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Receipt<unknown> | 'retry'> {
    if (this.queued >= this.tuning.maxQueue) {
      return Promise.reject(
        new NotAppendedError(
          'queue_saturated',
          `${this.queued} proposals are already waiting at ${this.self} (max ${this.tuning.maxQueue}); retry later`,
        ),
      );
    }
    this.queued++;
    return new Promise<Receipt<unknown> | 'retry'>((resolve, reject) => {
      const p = new PendingProposal(
        'proposal',
        timeoutMs,
        this.deadlines,
        now,
        signal,
        resolve,
        reject,
        this.releaseQueued,
      );
      this.enqueue(() => this.appendProposal(p, data));
    });
  }

  /** In the loop: appends a proposal, joins the same keyed command in flight, or answers it. */
  private appendProposal(
    p: PendingProposal,
    data: { command?: unknown; key?: string; fingerprint?: string },
  ): void {
    if (p.settled) return;
    if (this.state !== 'running') {
      return p.fail(new NotAppendedError('stopped', `member ${this.self} stopped`));
    }
    if (this.core.role !== 'leader') return p.retry();
    const key = data.key;
    if (key !== undefined) {
      const known = this.rs.window.lookup(key);
      if (known && known.fingerprint !== data.fingerprint) return p.fail(keyReused(key));
      if (known) {
        return p.succeed({ position: { ...known.position }, result: known.result, replayed: true });
      }
      const inFlight = this.inFlightKeys.get(key);
      if (inFlight && inFlight.fingerprint !== data.fingerprint) return p.fail(keyReused(key));
      if (inFlight) {
        // The same command is already in the log: wait for its decision instead of appending again.
        p.appended = true;
        p.joined = true;
        return this.addWaiter(inFlight.index, this.core.term, p);
      }
    }
    const entry: CommandData =
      key === undefined ? { c: data.command } : { c: data.command, k: key, f: data.fingerprint };
    const r = this.core.propose(entry);
    if (!r.ok) return p.retry();
    p.appended = true;
    if (key !== undefined) {
      this.inFlightKeys.set(key, { fingerprint: data.fingerprint!, index: r.index });
    }
    this.addWaiter(r.index, r.term, p);
  }

  private addWaiter(index: number, term: number, w: Waiter): void {
    this.waiters.add(index, term, w);
  }

  private failWaiters(error: () => Error): void {
    const all = this.waiters.clear();
    this.inFlightKeys.clear();
    for (const w of all) w.fail(error());
  }

  // ---- the loop ----

  private enqueue(input: () => void): void {
    this.inbox.push(input);
    this.kick();
  }

  private kick(): void {
    if (this.looping || this.state !== 'running') return;
    this.looping = true;
    this.idle = this.loop();
  }

  private async loop(): Promise<void> {
    try {
      let sliceStart = this.clock.now();
      for (;;) {
        while (this.inbox.length > 0 && this.state === 'running') this.inbox.shift()!();
        if (this.state !== 'running') break;
        if (this.snapshotWritten) {
          await this.compactToSnapshot(this.snapshotWritten);
          continue;
        }
        if (!this.core.hasReady()) break;
        await this.handleReady(this.core.ready());
        // A write to memory resolves without leaving the microtask queue: without this, a
        // backlog would be applied in one go while no timer (tick, heartbeat) could fire.
        if (this.clock.now() - sliceStart >= this.tuning.loopSliceMs) {
          this.stats.loopYields++;
          await this.yieldToEventLoop();
          sliceStart = this.clock.now();
        }
      }
    } catch (error) {
      this.fatal = error as Error;
      this.log.error({ err: error }, 'raft member failed; stopping it so replicas cannot diverge');
      this.looping = false;
      void this.stop();
      return;
    }
    this.looping = false;
    if ((this.inbox.length > 0 || this.snapshotWritten) && this.state === 'running') this.kick();
  }

  private async handleReady(rd: Ready): Promise<void> {
    // A leader's appends go out while its own copy is being written (the core says when that
    // is safe): followers persist in parallel with us instead of after us.
    if (rd.messagesFirst) for (const m of rd.messages) this.send(m);
    // Otherwise durable first: nothing below may be seen by anyone before the disk has it. A
    // Ready that only moves the commit index is not written on its own (see mustSync): its hard
    // state goes with the next write that must be synced.
    if (mustSync(rd, this.durableHardState)) {
      const hardState = rd.hardState ?? this.deferredHardState;
      await this.storage.persist({ hardState, entries: rd.entries, snapshot: rd.snapshot });
      this.stats.persists++;
      if (hardState) this.durableHardState = hardState;
      this.deferredHardState = undefined;
    } else if (rd.hardState) {
      this.deferredHardState = rd.hardState;
    }
    if (this.state !== 'running') return;
    if (rd.snapshot) {
      this.mem.applySnapshot(rd.snapshot);
      const installing = this.installing;
      if (installing?.snapshot === rd.snapshot) {
        this.rs.install(rd.snapshot, installing.assembled);
        this.installing = undefined;
        this.snapshotReceiver.installed(installing.from, installing.term, rd.snapshot.meta.index);
      } else {
        this.rs.restore(rd.snapshot);
      }
      this.lastSnapshotIndex = rd.snapshot.meta.index;
      this.snapshotWritingAt = Math.max(this.snapshotWritingAt, rd.snapshot.meta.index);
      this.stats.snapshotsInstalled++;
      this.log.info(
        { index: rd.snapshot.meta.index, term: rd.snapshot.meta.term },
        'installed snapshot from leader',
      );
    }
    this.mem.append(rd.entries);
    if (rd.hardState) this.mem.setHardState(rd.hardState);
    if (!rd.messagesFirst) for (const m of rd.messages) this.send(m);
    for (const e of rd.committedEntries) this.applyEntry(e);
    for (const r of rd.readStates) {
      const pending = this.reads.get(r.context);
      if (pending && pending.index === undefined) pending.index = r.index;
    }
    this.core.advance();
    this.serveReads();
    if (rd.softState || rd.hardState) this.noticeLeadership();
    this.maybeSnapshot();
  }

  /** Resumes a loop that handed the event loop back (stop does not wait for the timer). */
  private resumeLoop: (() => void) | undefined;

  private yieldToEventLoop(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = this.clock.setTimer(0, () => this.resumeLoop?.());
      this.resumeLoop = () => {
        this.resumeLoop = undefined;
        timer.cancel();
        resolve();
      };
    });
  }

  private send(m: Message): void {
    if (m.type === 'snap') {
      // Never whole: the sender streams the snapshot's pieces as chunks.
      this.snapshotSender.offer(m, this.ticks);
      return;
    }
    try {
      this.transport.send(m.to, {
        channel: RAFT_CHANNEL,
        body: { cluster: this.cluster, message: m },
      });
    } catch (error) {
      this.log.warn({ err: error, to: m.to, type: m.type }, 'raft message could not be sent');
    }
  }

  private applyEntry(e: Entry): void {
    const outcome = this.rs.apply(e);
    let w = this.waiters.take(e.index);
    const data = e.data as CommandData | null;
    if (data?.k !== undefined && this.inFlightKeys.get(data.k)?.index === e.index)
      this.inFlightKeys.delete(data.k);
    const position = { term: e.term, index: e.index };
    for (; w; w = w.next) {
      if (w.term !== e.term) {
        w.fail(
          new OutcomeUnknownError('leadership_lost', `another entry took log index ${e.index}`),
        );
        continue;
      }
      switch (outcome.kind) {
        case 'applied':
          w.succeed({ position, result: outcome.result, replayed: w.joined });
          break;
        case 'replayed':
          w.succeed({
            position: { ...outcome.decision.position },
            result: outcome.decision.result,
            replayed: true,
          });
          break;
        case 'key_reused':
          w.fail(keyReused(data!.k!));
          break;
        default:
          w.succeed({ position, result: null, replayed: false });
      }
    }
    if (outcome.kind !== 'applied' || this.watchers.size === 0) return;
    const view = this.view();
    const applied: AppliedEntry<C, R> = { position, command: data!.c as C, result: outcome.result };
    for (const fn of this.watchers) {
      try {
        fn(view, applied);
      } catch (error) {
        this.log.error({ err: error, index: e.index }, 'a watcher threw; it stays subscribed');
      }
    }
  }

  private serveReads(): void {
    for (const [, r] of this.reads) {
      if (r.index !== undefined && this.rs.applied.index >= r.index) r.resolve(this.view());
    }
  }

  private noticeLeadership(): void {
    const now = this.currentLeadership();
    const before = this.lastLeadership;
    if (
      now.isLeader === before.isLeader &&
      now.leader === before.leader &&
      now.term === before.term
    )
      return;
    this.lastLeadership = now;
    if (before.isLeader && !(now.isLeader && now.term === before.term)) {
      this.failWaiters(
        () =>
          new OutcomeUnknownError(
            'leadership_lost',
            `${this.self} lost leadership of term ${before.term}`,
          ),
      );
    }
    if (now.isLeader && !before.isLeader) this.rememberInFlightKeys();
    this.log.info(
      { term: now.term, leader: now.leader ?? null, isLeader: now.isLeader },
      'leadership changed',
    );
    for (const fn of this.leadershipListeners) {
      try {
        fn({ ...now });
      } catch (error) {
        this.log.error({ err: error }, 'a leadership listener threw');
      }
    }
    for (const w of [...this.leadershipWaiters]) w();
  }

  /** A new leader's log may hold keyed entries of earlier terms: a retry must join, not duplicate. */
  private rememberInFlightKeys(): void {
    const log = this.core.log;
    const entries =
      log.slice(Math.max(this.rs.applied.index + 1, log.firstIndex()), log.lastIndex() + 1) ?? [];
    for (const e of entries) {
      const data = e.data as CommandData | null;
      if (e.type === 'normal' && data?.k !== undefined)
        this.inFlightKeys.set(data.k, { fingerprint: data.f!, index: e.index });
    }
  }

  private currentLeadership(): Leadership {
    const lead = this.core.lead;
    return {
      self: this.self,
      isLeader: this.core.role === 'leader',
      leader: lead === NONE ? undefined : lead,
      term: this.core.term,
    };
  }

  private waitForLeadershipChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done: () => void = once<void>(() => {
        timer.cancel();
        this.leadershipWaiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      });
      const timer = this.clock.setTimer(Math.max(1, ms), done);
      this.leadershipWaiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    }).then(() => {
      if (signal?.aborted)
        throw new OutcomeUnknownError('aborted', 'aborted while waiting for a leader');
      if (this.state !== 'running')
        throw new NotAppendedError('stopped', `member ${this.self} stopped`);
    });
  }

  /**
   * Every snapshotInterval applied entries: captures the replicated state (O(1) for a state
   * machine with `capture`, the idempotency window by reference) and writes it in the
   * background, so neither the capture nor the write holds the loop; once it is durable, the
   * loop puts it in force and compacts the log (compactToSnapshot).
   */
  private maybeSnapshot(): void {
    const applied = this.rs.applied.index;
    if (this.snapshotWriting || this.snapshotWritten) return;
    if (applied - this.snapshotWritingAt < this.tuning.snapshotInterval) return;
    const term = this.mem.term(applied);
    if (term === undefined) return;
    const snapshot: Snapshot = {
      meta: { index: applied, term, voters: [...this.rs.voters] },
      data: this.rs.capture(),
    };
    this.snapshotWritingAt = applied;
    this.snapshotWriting = this.storage.writeSnapshot(snapshot).then(
      () => {
        this.snapshotWriting = undefined;
        if (this.state !== 'running') return;
        this.snapshotWritten = snapshot;
        this.kick();
      },
      (error: unknown) => {
        this.snapshotWriting = undefined;
        this.stats.snapshotFailures++;
        this.log.error(
          { err: error, index: applied },
          'writing a snapshot failed; the log is kept and another is tried after the next interval',
        );
      },
    );
  }

  /** In the loop, between Readies: a durable snapshot of ours goes in force, the log shrinks. */
  private async compactToSnapshot(snapshot: Snapshot): Promise<void> {
    this.snapshotWritten = undefined;
    const index = snapshot.meta.index;
    // A leader's snapshot installed meanwhile is newer: ours is no use.
    if (index <= this.mem.snapshot().meta.index) return;
    this.mem.createSnapshot(index, snapshot.meta.voters, snapshot.data);
    const compactTo = Math.max(this.mem.firstIndex() - 1, index - this.tuning.snapshotRetain);
    const retained = this.mem.entries(compactTo + 1, this.mem.lastIndex() + 1);
    const hardState = this.mem.hardState();
    await this.storage.compact(this.mem.snapshot(), compactTo, retained, hardState);
    // That wrote the latest hard state, deferred commit included.
    this.durableHardState = hardState;
    this.deferredHardState = undefined;
    this.mem.compact(compactTo);
    this.lastSnapshotIndex = index;
    this.stats.snapshotsTaken++;
    this.log.debug({ index, compactTo }, 'snapshot taken, log compacted');
  }

  // ---- snapshot transfers ----

  private startSnapshotTransfers(): void {
    const stallTicks = this.tuning.electionTicks * 4;
    this.snapshotSender = new SnapshotSender({
      cluster: this.cluster,
      transport: this.transport,
      log: this.log,
      stats: this.stats,
      resendTicks: Math.max(1, Math.floor(this.tuning.electionTicks / 2)),
      stallTicks,
    });
    this.snapshotReceiver = new SnapshotReceiver<AssembledState<S, R>>({
      cluster: this.cluster,
      transport: this.transport,
      log: this.log,
      stats: this.stats,
      term: () => this.core.term,
      committed: () => this.core.log.committed,
      assembly: () => this.rs.assembly(),
      assembled: (from, term, meta, assembled) => this.onSnapshotAssembled(from, term, meta, assembled),
      stale: (from, term, meta) =>
        this.enqueue(() =>
          this.core.step({ type: 'snap', from, to: this.self, term, snapshot: { meta, data: null } }),
        ),
    });
  }

  /**
   * A leader's snapshot arrived whole and is assembled. Its file is written first (in the
   * background: the loop goes on), then the core is given it; the Ready that installs it only
   * records it, and puts the assembled state in force in O(1).
   */
  private onSnapshotAssembled(
    from: MemberId,
    term: number,
    meta: SnapshotMeta,
    assembled: AssembledState<S, R>,
  ): void {
    const snapshot: Snapshot = { meta, data: this.rs.captureOf(assembled) };
    this.storage.writeSnapshot(snapshot).then(
      () =>
        this.enqueue(() => {
          if (this.state !== 'running') return;
          this.installing = { snapshot, from, term, assembled };
          this.core.step({ type: 'snap', from, to: this.self, term, snapshot });
          // Refused (stale, or a newer term): nothing to install.
          if (this.core.log.pendingSnapshot() !== snapshot) {
            this.installing = undefined;
            this.snapshotReceiver.installed(from, term, meta.index);
          }
        }),
      (error: unknown) => {
        this.snapshotReceiver.abandon();
        this.log.error({ err: error, index: meta.index }, "writing a leader's snapshot failed");
      },
    );
  }

  private onSnapshotMessage(from: MemberId, message: PeerMessage): void {
    if (this.state !== 'running') return;
    const body = parseSnapshotBody(message.body);
    if (!body) {
      this.stats.malformedMessages++;
      return;
    }
    if (body.cluster !== this.cluster || !this.isParticipant(from)) {
      this.stats.foreignMessages++;
      return;
    }
    if (body.kind === 'chunk') this.snapshotReceiver.onChunk(from, body);
    else this.snapshotSender.onAck(from, body, this.ticks);
  }

  // ---- ticks and messages ----

  private scheduleTick(): void {
    if (this.state !== 'running') return;
    this.tickTimer = this.clock.setTimer(this.tuning.tickMs, () => {
      this.ticks++;
      this.deadlines.sweep(this.clock.now());
      this.enqueue(() => {
        this.core.tick();
        this.snapshotSender.tick(
          this.ticks,
          this.core.role === 'leader' ? this.core.term : undefined,
        );
        if (this.ticks % this.tuning.electionTicks === 0) this.snapshotReceiver.keepAlive();
        // Read requests can be lost with their messages: ask again every election timeout.
        if (this.ticks % this.tuning.electionTicks === 0) {
          for (const [context, r] of this.reads)
            if (r.index === undefined) this.core.readIndex(context);
        }
      });
      this.scheduleTick();
    });
  }

  private onRaftMessage(from: MemberId, message: PeerMessage): void {
    this.admin.heard(from);
    const parsed = parseRaftEnvelope(message.body);
    if (!parsed) {
      this.stats.malformedMessages++;
      return;
    }
    const { cluster, message: m } = parsed;
    if (cluster !== this.cluster || m.from !== from || m.to !== this.self) {
      this.stats.foreignMessages++;
      return;
    }
    if (!this.isParticipant(from)) {
      this.stats.foreignMessages++;
      return;
    }
    if (!hasRequiredFields(m)) {
      this.stats.malformedMessages++;
      return;
    }
    this.enqueue(() => this.core.step(m));
  }

  /** Only members of the configuration (or one the leader is bringing in) take part. */
  private isParticipant(from: MemberId): boolean {
    return (
      this.core.voters().includes(from) ||
      this.core.progressOf(from) !== undefined ||
      this.bootstrapVoters.includes(from)
    );
  }

  private assertRunning(what: string): void {
    if (this.state !== 'running') {
      throw new NotAppendedError(
        'stopped',
        `cannot ${what}: member ${this.self} is ${this.state}${this.fatal ? ` (failed: ${this.fatal.message})` : ''}`,
      );
    }
  }
}

function keyReused(key: string): NotAppendedError {
  return new NotAppendedError(
    'key_reused',
    `idempotency key ${JSON.stringify(key)} was already used for a different command; use a new key`,
  );
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Why a command cannot enter the log (every member encodes it as JSON), or undefined. */
export function unloggableCommand(command: unknown): NotAppendedError | undefined {
  if (valueDepthExceeds(command, MAX_COMMAND_DEPTH)) {
    return new NotAppendedError('invalid_command', `the command nests deeper than ${MAX_COMMAND_DEPTH} levels`);
  }
  return undefined;
}
