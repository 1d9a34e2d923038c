import type {
  AppliedEntry,
  AppliedView,
  AuditRecord,
  AuditStore,
  Clock,
  Timer,
  Logger,
  MetadataConsensus,
  MemberId,
} from '@baton/contracts';
import type { PendingAudit } from './pending-audits.js';

/** Acknowledgements per consensus entry, at most: keeps one entry small whatever the backlog. */
const MAX_ACK_BATCH = 512;

/**
 * What a variant's state machine tells the projection: the records still pending in its state,
 * which ones an applied entry sealed, and the command that acknowledges stored ones.
 */
export interface AuditTrailSource<S, C, R> {
  /** Every record still pending (what a sweep looks over: the projection backlog, not the state). */
  pending(state: S): Iterable<PendingAudit>;
  pendingById(state: S, id: string): PendingAudit | undefined;
  /** The ids of the records the entry sealed (none for most entries). */
  sealedBy(view: AppliedView<S>, entry: AppliedEntry<C, R>): Iterable<string>;
  /** The command saying `member` stored the records `ids` (a repeat is a no-op in the state machine). */
  acknowledge(ids: string[], member: MemberId): C;
}

export interface AuditProjectionOptions {
  /** First delay before retrying a failed projection; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * How often the records this member still owes are looked for again. A member that catches
   * up by an installed snapshot sees no apply of the commits it missed, so no other trigger fires.
   */
  sweepIntervalMs?: number;
}

/**
 * Moves sealed records from the replicated state into this member's durable audit store, then
 * acknowledges in consensus. The order is the point: the acknowledgement is proposed only after
 * the store write resolved, so a crash between the two leaves this member's projection pending
 * (the store's (authority, commit_index) identity makes the repeat harmless) and never makes the
 * record vanish from consensus before it is durable here.
 *
 * Triggers: a commit that names this member among its voters, this member becoming leader
 * (seed 003: "a node projects its pending records when it becomes leader"), its own start, a
 * retry timer after a failure, and a periodic sweep (for records that arrived in a snapshot).
 * Both variants use it: each supplies its AuditTrailSource.
 */
export class AuditTrailProjection<S, C, R> {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly ackQueue: { id: string; resolve: () => void }[] = [];
  private acking = false;
  private readonly unsubscribe: (() => void)[] = [];
  private retryTimer: Timer | undefined;
  private sweepTimer: Timer | undefined;
  private retryAttempt = 0;
  private stopped = false;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly sweepIntervalMs: number;

  constructor(
    private readonly consensus: MetadataConsensus<S, C, R>,
    private readonly source: AuditTrailSource<S, C, R>,
    private readonly store: AuditStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    options: AuditProjectionOptions = {},
  ) {
    this.retryDelayMs = options.retryDelayMs ?? 500;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
  }

  get self(): MemberId {
    return this.consensus.leadership().self;
  }

  start(): void {
    this.stopped = false;
    this.unsubscribe.push(
      this.consensus.onLeadership((leadership) => {
        if (leadership.isLeader) void this.projectPending();
      }),
      this.consensus.watch((view, entry) => {
        for (const id of this.source.sealedBy(view, entry)) {
          const pending = this.source.pendingById(view.state, id);
          if (pending?.awaiting.includes(this.self)) void this.projectInBackground(pending.record);
        }
      }),
    );
    // Whatever this member still owes (it crashed between store and ack, or its store was down)
    // is projected at start, leader or not: every voter keeps its own durable audit.
    void this.projectPending();
    this.armSweep();
  }

  stop(): void {
    this.stopped = true;
    for (const off of this.unsubscribe.splice(0)) off();
    this.retryTimer?.cancel();
    this.retryTimer = undefined;
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
  }

  /**
   * Resolves once the store writes under way have ended (their outcome does not matter: a record
   * not stored stays pending). A host awaits it after `stop` before it closes the store, so no
   * write lands in a store, or a directory, being closed.
   */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Projects what this member owes every `sweepIntervalMs`; the next sweep waits for this one. */
  private armSweep(): void {
    if (this.stopped) return;
    this.sweepTimer = this.clock.setTimer(this.sweepIntervalMs, () => {
      this.sweepTimer = undefined;
      if (!this.stopped) void this.projectPending().finally(() => this.armSweep());
    });
  }

  /**
   * Stores the record, then queues its acknowledgement. Resolves once the store write committed
   * (what an answer to the operator needs: the audit is durable here) without waiting for the
   * acknowledgement's consensus round, which is bookkeeping and is batched with others. Rejects
   * (StoreUnavailableError...) only when the store write failed: the caller answers 503. A failed
   * acknowledgement is retried later.
   */
  project(record: AuditRecord): Promise<void> {
    const running = this.inFlight.get(record.id);
    if (running) return running;
    const work = this.storeThenAck(record).finally(() => this.inFlight.delete(record.id));
    this.inFlight.set(record.id, work);
    return work;
  }

  /** Projects every pending record still awaiting this member. Failures arm a retry. */
  async projectPending(): Promise<void> {
    if (this.stopped) return;
    const { state } = this.consensus.view();
    const mine = [...this.source.pending(state)].filter((p) => p.awaiting.includes(this.self));
    let failed = false;
    for (const pending of mine) {
      try {
        await this.project(pending.record);
      } catch (error) {
        failed = true;
        this.log.warn({ record: pending.record.id, err: (error as Error).message }, 'audit projection failed; will retry');
      }
    }
    if (failed) this.scheduleRetry();
    else this.retryAttempt = 0;
  }

  private projectInBackground(record: AuditRecord): Promise<void> {
    return this.project(record).catch((error) => {
      this.log.warn({ record: record.id, err: (error as Error).message }, 'audit projection failed; will retry');
      this.scheduleRetry();
    });
  }

  private async storeThenAck(record: AuditRecord): Promise<void> {
    await this.store.put(record);
    void this.acknowledge(record.id);
  }

  /**
   * Queues the acknowledgement of a stored record and resolves once a batch carrying it was
   * proposed (committed or not: a failed ack is retried later, the record is durable already).
   * While one batch is in consensus the next ones gather, so concurrent projections share one
   * entry instead of one each.
   */
  private acknowledge(id: string): Promise<void> {
    return new Promise((resolve) => {
      this.ackQueue.push({ id, resolve });
      if (!this.acking) void this.flushAcks();
    });
  }

  private async flushAcks(): Promise<void> {
    this.acking = true;
    try {
      while (this.ackQueue.length > 0) {
        const batch = this.ackQueue.splice(0, MAX_ACK_BATCH);
        try {
          // No idempotency key: a repeated acknowledgement is a no-op in the state machine, and
          // keys for acks would crowd other receipts out of the idempotency window.
          await this.consensus.propose(this.source.acknowledge(batch.map((b) => b.id), this.self));
        } catch (error) {
          this.log.warn({ records: batch.length, err: (error as Error).message }, 'audit acknowledgements not committed; will retry');
          this.scheduleRetry();
        }
        for (const waiter of batch) waiter.resolve();
      }
    } finally {
      this.acking = false;
    }
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    const delay = Math.min(this.maxRetryDelayMs, this.retryDelayMs * 2 ** Math.min(this.retryAttempt, 20));
    this.retryAttempt++;
    this.retryTimer = this.clock.setTimer(delay, () => {
      this.retryTimer = undefined;
      void this.projectPending();
    });
  }
}
