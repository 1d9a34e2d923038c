import type { Clock, Timer, Logger, MetadataConsensus, ObjectStore } from '@baton/contracts';
import { BufferBudget } from './buffer-budget.js';
import type { StreamPlacement } from './labels.js';
import { SharedCatchUp } from '@baton/consensus';
import { EVERYTHING, streamsTouchedBy, type Change } from './changed-streams.js';
import type { StreamCommand, StreamResult } from './commands.js';
import { HandoffTimeoutError, NotOwnerError, StreamFencedError, StreamNotFoundError } from './errors.js';
import { type NodeId, type PendingTransfer, type ProducerMark, type StreamId, type StreamMetadata } from './model.js';
import { routeRequest } from './routing.js';
import { claimStreamTail } from './segment-claim.js';
import { SegmentFencedError, SegmentReader, writeSegment, type StoredRecord } from './segments.js';
import { SessionNotWritableError, StreamSession, type AppendResult, type ClosedSession } from './stream-session.js';
import { CompactingWal } from './compacting-wal.js';
import type { ProducerStamp, StreamWal, WalEntry } from './wal.js';
import { recoverSessions } from './wal-recovery.js';

export type StreamConsensus = MetadataConsensus<StreamMetadata, StreamCommand, StreamResult>;

/** What a node reports about takeovers and fencing (metrics). */
export interface StreamNodeEvents {
  takeover?(outcome: 'claimed' | 'fenced'): void;
  fenced?(): void;
}

export interface StreamNodeOptions {
  node: NodeId;
  /** How long an append parks on a node that is about to serve the stream (seed: 10 s). */
  parkTimeoutMs: number;
  /** How often a parked request re-reads the view between metadata notifications. */
  parkPollMs: number;
  /** The Retry-After a client gets when parking times out. */
  retryAfterSeconds: number;
  /** Record bytes accepted and not yet durable, across all of this node's streams (503 beyond). */
  maxBufferedBytes: number;
  maxSegmentRecords: number;
  maxProducers: number;
  /** Compact the WAL after roughly this many bytes were appended to it. */
  walCompactionBytes: number;
}

export const DEFAULT_STREAM_NODE_OPTIONS: Omit<StreamNodeOptions, 'node'> = {
  parkTimeoutMs: 10_000,
  parkPollMs: 25,
  retryAfterSeconds: 1,
  maxBufferedBytes: 32 * 1024 * 1024,
  maxSegmentRecords: 10_000,
  maxProducers: 1_000,
  walCompactionBytes: 64 * 1024 * 1024,
};

export interface StreamDescription {
  stream: StreamId;
  owner: NodeId;
  address?: string;
  epoch: number;
  state: 'open' | 'closed';
  /** Offset the next record gets (exact on the serving owner; the metadata's bound elsewhere). */
  tail: number;
  transfer?: PendingTransfer;
  placement?: StreamPlacement;
}

/** The node is stopped or crashed: nothing more is accepted. */
export class NodeStoppedError extends Error {
  constructor(node: NodeId) {
    super(`stream node ${node} is stopped`);
  }
}

/**
 * One node of the stream-transfer variant: the sessions of the streams it owns, their WAL and
 * flushes, request routing and parking, and recovery after a restart. What to open and close is
 * decided by the HandoffWatcher from the metadata view; this class does the local work.
 */
export class StreamNode {
  readonly self: NodeId;
  readonly options: StreamNodeOptions;
  readonly wal: StreamWal;
  private readonly sessions = new Map<StreamId, StreamSession>();
  /** Sessions this node closed whose close the metadata has not recorded yet. */
  private readonly closedSessions = new Map<StreamId, ClosedSession>();
  private readonly opening = new Map<StreamId, Promise<void>>();
  /**
   * The open entries of sessions being opened: logged (or being logged) but not yet in
   * `sessions`. A compaction in between must keep them, or a crash forgets the session.
   */
  private readonly pendingOpens = new Map<StreamId, WalEntry>();
  private readonly reader: SegmentReader;
  /**
   * Streams whose chain another node took over while this node served them, with the epoch it
   * lost: no session is opened again at that epoch, whatever a stale view says.
   */
  private readonly fenced = new Map<StreamId, number>();
  private waiters = new Set<() => void>();
  private unwatch?: () => void;
  private listeners = new Set<(change: Change) => void>();
  /** Index of the last applied entry seen, to tell a contiguous entry from a jump. */
  private lastSeen?: number;
  private stopped = false;
  /** Read-your-writes: a stream not known here is looked up again after one shared catch-up read. */
  private readonly reads = new SharedCatchUp(() => this.consensus.read());
  /** What every session of this node buffers against (not per stream: a flood can span streams). */
  private readonly buffer: BufferBudget;
  /** Set by the host to count takeovers and fenced sessions. */
  events: StreamNodeEvents = {};
  /** Set by the host to its NodeLease: while false, sessions acknowledge nothing. */
  acknowledgeable?: (acceptedAt?: number) => boolean;

  constructor(
    readonly consensus: StreamConsensus,
    readonly store: ObjectStore,
    wal: StreamWal,
    readonly clock: Clock,
    readonly logger: Logger,
    options: Partial<StreamNodeOptions> & { node: NodeId },
  ) {
    this.options = { ...DEFAULT_STREAM_NODE_OPTIONS, ...options };
    this.self = this.options.node;
    this.reader = new SegmentReader(store);
    this.buffer = new BufferBudget(this.options.maxBufferedBytes);
    this.wal = new CompactingWal(wal, () => this.liveWalEntries(), this.options.walCompactionBytes);
  }

  /** Replays the WAL: flushes what a crash left unflushed and closes those sessions at their epoch. */
  async start(): Promise<void> {
    const recovered = recoverSessions(await this.wal.replay());
    for (const session of recovered.values()) {
      if (session.status === 'settled') continue;
      if (session.status === 'open') {
        for (const pending of session.unflushed) {
          const records = pending.bodies.map((body) => ({ body }));
          const stored = await this.retryUntilDurable(() =>
            writeSegment(
              this.store,
              {
                stream: session.stream,
                epoch: session.epoch,
                first: pending.first,
                records,
                ...(pending.stamps ? { stamps: pending.stamps } : {}),
              },
              pending.slot ?? 0,
            ),
          );
          if (stored === 'fenced') {
            // Taken over while this node was away: what it logged past the fence was never
            // acknowledged (an append is acknowledged once stored), so it is dropped.
            this.fenced.set(session.stream, session.epoch);
            session.next = pending.first;
            this.logger.warn({ stream: session.stream, epoch: session.epoch }, 'stream was taken over while this node was down; unflushed records dropped');
            break;
          }
        }
      }
      this.closedSessions.set(session.stream, {
        stream: session.stream,
        epoch: session.epoch,
        tail: session.next,
        producers: session.producers,
      });
    }
    // The log is now just the closes the metadata may not know yet.
    await this.wal.rewrite([...this.closedSessions.values()].map((c) => ({ t: 'closed' as const, ...c })));
    this.logger.info({ recovered: this.closedSessions.size }, 'stream node recovered its WAL');
    this.lastSeen = this.consensus.view().applied.index;
    this.unwatch = this.consensus.watch((_view, entry) => {
      const contiguous = this.lastSeen !== undefined && entry.position.index === this.lastSeen + 1;
      this.lastSeen = entry.position.index;
      this.changed(contiguous ? { streams: streamsTouchedBy(entry) } : EVERYTHING);
    });
  }

  /** Graceful stop: sessions are closed (flushed, recorded in the WAL) so a restart resumes cleanly. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unwatch?.();
    await Promise.allSettled([...this.sessions.values()].map((s) => s.close()));
    this.wakeAll();
    await this.wal.close();
  }

  /** The process dies here: no flush, no WAL write, in-flight appends fail. For crash tests. */
  crash(): void {
    this.stopped = true;
    this.unwatch?.();
    for (const session of this.sessions.values()) session.kill(new NodeStoppedError(this.self));
    this.wakeAll();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  metadata(): StreamMetadata {
    return this.consensus.view().state;
  }

  /**
   * Called on every metadata change and session change: wakes parked requests and tells the
   * listeners what changed (everything when not told: the view may have jumped).
   */
  changed(change: Change = EVERYTHING): void {
    this.wakeAll();
    for (const listener of this.listeners) listener(change);
  }

  /** Whether the last applied entry this node was told about is the view's own (no entries missed). */
  get caughtUpWithView(): boolean {
    return this.lastSeen === this.consensus.view().applied.index;
  }

  onChange(fn: (change: Change) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  // ---- data path ----------------------------------------------------------------------------

  /**
   * Appends a batch. Served when this node owns the stream and has it open; parked (up to the
   * park timeout) when this node is about to serve it; refused with a hint otherwise.
   */
  async append(stream: StreamId, bodies: string[], producer?: ProducerStamp): Promise<AppendResult> {
    const started = this.clock.now();
    const deadline = started + this.options.parkTimeoutMs;
    for (;;) {
      if (this.stopped) throw new NodeStoppedError(this.self);
      const route = routeRequest(this.metadata(), this.self, stream);
      if (route.kind === 'missing') {
        if (await this.knowsAfterCatchingUp(stream)) continue;
        throw new StreamNotFoundError(stream);
      }
      if (route.kind === 'redirect') {
        throw new NotOwnerError(stream, route.owner, route.address, route.epoch, route.transferring);
      }
      if (route.kind === 'serve') {
        if ((this.fenced.get(stream) ?? 0) >= route.epoch) throw new StreamFencedError(stream, this.self);
        const session = this.sessions.get(stream);
        if (session?.fenced && session.epoch === route.epoch) throw new StreamFencedError(stream, this.self);
        if (session && session.epoch === route.epoch && session.writable) {
          try {
            return await session.append(bodies, producer);
          } catch (error) {
            if (!(error instanceof SessionNotWritableError)) throw error;
            // The session began closing between routing and appending: route again.
            continue;
          }
        }
      }
      const now = this.clock.now();
      if (now >= deadline) {
        throw new HandoffTimeoutError(stream, now - started, this.options.retryAfterSeconds);
      }
      await this.waitForChange(Math.min(this.options.parkPollMs, deadline - now));
    }
  }

  /** Durable records from `from`, at most `limit`, straight from the object store (any node). */
  async read(stream: StreamId, from: number, limit: number): Promise<StoredRecord[]> {
    if (!(await this.knowsAfterCatchingUp(stream))) throw new StreamNotFoundError(stream);
    return this.reader.read(stream, from, limit);
  }

  async describe(stream: StreamId): Promise<StreamDescription> {
    await this.knowsAfterCatchingUp(stream);
    const state = this.metadata();
    const record = state.stream(stream);
    if (!record) throw new StreamNotFoundError(stream);
    const session = this.sessions.get(stream);
    const serving = record.owner === this.self && session?.epoch === record.epoch && session.writable;
    const transfer = state.transfer(stream);
    return {
      stream,
      owner: record.owner,
      address: state.node(record.owner)?.address,
      epoch: record.epoch,
      state: record.state,
      tail: serving ? session.tail : record.tail,
      ...(transfer ? { transfer } : {}),
      ...(record.placement ? { placement: record.placement } : {}),
    };
  }

  /**
   * Read-your-writes for creation: a stream this node does not know may have been created by a
   * commit it has not applied yet (the admin API answered 201 elsewhere). Before saying it does
   * not exist, catch up with the leader's commit through a linearizable read, bounded by the
   * consensus' read timeout (no leader: the read's error, a 503, rather than a wrong 404).
   */
  private async knowsAfterCatchingUp(stream: StreamId): Promise<boolean> {
    if (this.metadata().stream(stream)) return true;
    await this.reads.catchUp();
    return this.metadata().stream(stream) !== undefined;
  }

  // ---- what the watcher drives ----------------------------------------------------------------

  session(stream: StreamId): StreamSession | undefined {
    return this.sessions.get(stream);
  }

  closedSession(stream: StreamId): ClosedSession | undefined {
    return this.closedSessions.get(stream);
  }

  isOpening(stream: StreamId): boolean {
    return this.opening.has(stream);
  }

  /**
   * Tells the metadata that this node fenced the lost owner of `stream` (the trail's record of it).
   * Best effort, off the open's path: a lost proposal loses that record, never the fence itself.
   */
  private recordFence(stream: StreamId, epoch: number, tail: number): void {
    const at = Math.max(0, Math.floor(this.clock.now()));
    void this.consensus
      .propose({ type: 'fenced', stream, node: this.self, epoch, tail, at })
      .catch((error: unknown) => this.logger.warn({ stream, epoch, err: (error as Error).message }, 'the fence is not on the audit trail: its record was not committed'));
  }

  /**
   * Opens the stream here at `epoch` (the pre-warm), recording it in the WAL first. After a
   * takeover (`claim`), the recorded tail and producer marks are only where the old owner's
   * epoch began: the tail is found in the object store and the old owner fenced there first.
   */
  openSession(
    stream: StreamId,
    epoch: number,
    tail: number,
    producers: Record<string, ProducerMark>,
    options: { claim?: boolean } = {},
  ): Promise<void> {
    const running = this.opening.get(stream);
    if (running) return running;
    const opening = (async () => {
      if (this.stopped) throw new NodeStoppedError(this.self);
      let slot = 0;
      if (options.claim) {
        let claimed;
        try {
          claimed = await claimStreamTail(this.store, stream, epoch, { tail, producers }, this.options.maxProducers);
        } catch (error) {
          if (error instanceof SegmentFencedError) {
            this.fenced.set(stream, epoch);
            this.events.takeover?.('fenced');
          }
          throw error;
        }
        this.logger.info({ stream, epoch, recordedTail: tail, tail: claimed.tail, read: claimed.segmentsRead }, 'stream taken over: tail found and fenced');
        ({ tail, slot, producers } = claimed);
        this.events.takeover?.('claimed');
        this.recordFence(stream, epoch, claimed.tail);
        if (this.stopped) throw new NodeStoppedError(this.self);
      }
      this.pendingOpens.set(stream, { t: 'open', stream, epoch, next: tail, producers, ...(slot > 0 ? { slot } : {}) });
      const session = await StreamSession.open(
        stream,
        epoch,
        tail,
        producers,
        {
          wal: this.wal,
          store: this.store,
          clock: this.clock,
          logger: this.logger,
          node: this.self,
          buffer: this.buffer,
          onFenced: (fenced) => this.changed({ streams: [fenced] }),
          acknowledgeable: (acceptedAt) => this.acknowledgeable?.(acceptedAt) ?? true,
        },
        {
          maxBufferedBytes: this.options.maxBufferedBytes,
          maxSegmentRecords: this.options.maxSegmentRecords,
          maxProducers: this.options.maxProducers,
        },
        slot,
      );
      if (this.stopped) {
        session.kill(new NodeStoppedError(this.self));
        throw new NodeStoppedError(this.self);
      }
      this.sessions.set(stream, session);
      this.closedSessions.delete(stream);
      this.logger.debug({ stream, epoch, tail }, 'stream opened');
      this.changed({ streams: [stream] });
    })().finally(() => {
      this.opening.delete(stream);
      this.pendingOpens.delete(stream);
    });
    this.opening.set(stream, opening);
    return opening;
  }

  /** Closes the live session (stop appends, flush, WAL) and remembers the close until it settles. */
  async closeSession(stream: StreamId): Promise<ClosedSession> {
    const session = this.sessions.get(stream);
    if (!session) throw new Error(`stream ${stream} has no session on ${this.self} to close`);
    let closed: ClosedSession;
    try {
      closed = await session.close();
    } catch (error) {
      if (session.fenced) await this.dropFenced(stream);
      throw error;
    }
    if (this.sessions.get(stream) === session) {
      this.closedSessions.set(stream, closed);
      this.changed({ streams: [stream] });
    }
    return closed;
  }

  /** The metadata recorded this close (or moved past it): forget it, durably. */
  async settle(stream: StreamId, epoch: number): Promise<void> {
    const closed = this.closedSessions.get(stream);
    if (!closed || closed.epoch !== epoch) return;
    await this.wal.append([{ t: 'settled', stream, epoch }]);
    if (this.closedSessions.get(stream) === closed) this.closedSessions.delete(stream);
    const session = this.sessions.get(stream);
    if (session && session.epoch <= epoch && !session.writable) this.sessions.delete(stream);
  }

  /** Streams this node closed whose close the metadata has not recorded yet. */
  unsettledStreams(): IterableIterator<StreamId> {
    return this.closedSessions.keys();
  }

  /** The epoch at which another node took `stream` over from this one, if it did. */
  fencedAt(stream: StreamId): number | undefined {
    return this.fenced.get(stream);
  }

  /** The metadata moved past the epoch this node lost: the fence has nothing more to guard. */
  forgetFence(stream: StreamId): void {
    this.fenced.delete(stream);
  }

  /**
   * Forgets a session the object store fenced: none of its unflushed records was acknowledged,
   * so they are dropped with it, and the WAL is told so a restart does not flush them again.
   */
  async dropFenced(stream: StreamId): Promise<void> {
    const session = this.sessions.get(stream);
    if (!session?.fenced) return;
    this.fenced.set(stream, Math.max(this.fenced.get(stream) ?? 0, session.epoch));
    this.sessions.delete(stream);
    this.events.fenced?.();
    if (this.closedSessions.get(stream)?.epoch === session.epoch) this.closedSessions.delete(stream);
    await this.wal.append([{ t: 'settled', stream, epoch: session.epoch }]);
    this.changed({ streams: [stream] });
  }

  /** Streams this node has any local state for (sessions or unsettled closes). */
  localStreams(): StreamId[] {
    return [...new Set([...this.sessions.keys(), ...this.closedSessions.keys()])];
  }

  // ---- internals ------------------------------------------------------------------------------

  /** Everything the WAL must still hold: live sessions, and closes not yet recorded in the metadata. */
  private liveWalEntries(): WalEntry[] {
    const entries: WalEntry[] = [...this.pendingOpens.values()];
    for (const [stream, session] of this.sessions) {
      if (this.closedSessions.get(stream)?.epoch === session.epoch) continue;
      entries.push(...session.liveWalEntries());
    }
    for (const closed of this.closedSessions.values()) entries.push({ t: 'closed', ...closed });
    return entries;
  }

  private waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: Timer | undefined = undefined;
      const wake = () => {
        timer?.cancel();
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
      timer = this.clock.setTimer(Math.max(1, ms), wake);
    });
  }

  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  private async retryUntilDurable(write: () => Promise<unknown>): Promise<'stored' | 'fenced'> {
    let delay = 20;
    for (;;) {
      try {
        await write();
        return 'stored';
      } catch (error) {
        if (error instanceof SegmentFencedError) return 'fenced';
        this.logger.warn({ err: error, node: this.self }, 'recovery flush failed; retrying');
        await this.clock.sleep(delay);
        delay = Math.min(delay * 2, 1000);
      }
    }
  }
}
