import type { Clock, Logger, ObjectStore } from '@baton/contracts';
import { AppendUnavailableError, ProducerHeldError, StaleProducerSequenceError, StreamFencedError } from './errors.js';
import type { NodeId, ProducerMark, StreamId } from './model.js';
import { BufferBudget } from './buffer-budget.js';
import { parseProducerKey, ProducerMarks } from './producer-marks.js';
import { SegmentFencedError, writeSegment } from './segments.js';
import type { BatchStamp, ProducerStamp, StreamWal, WalEntry } from './wal.js';

/** What an acknowledged append returns: where its records landed, and in which epoch. */
export interface AppendResult {
  stream: StreamId;
  epoch: number;
  first: number;
  count: number;
  /** True when this is a retry of a batch already appended (the original offsets are returned). */
  duplicate: boolean;
}

/** What a closed session leaves behind: the exact tail and the producer marks to hand over. */
export interface ClosedSession {
  stream: StreamId;
  epoch: number;
  tail: number;
  producers: Record<string, ProducerMark>;
}

export interface SessionOptions {
  /** Largest number of buffered (not yet durable) bytes before appends are refused with 503. */
  maxBufferedBytes: number;
  /** Most records in one segment object. */
  maxSegmentRecords: number;
  /**
   * Most record bytes in one segment object (a single larger batch still makes one segment):
   * a segment is encoded whole before it is stored, so its size is what a flush holds twice.
   */
  maxSegmentBytes?: number;
  /** Producer marks remembered per stream and principal (least recently used forgotten first). */
  maxProducers: number;
}

export interface SessionDeps {
  wal: StreamWal;
  store: ObjectStore;
  clock: Clock;
  logger: Logger;
  /** The node running the session, named in the error of a fenced append. */
  node: NodeId;
  /** The node's budget of buffered bytes, shared by its sessions; by default one of maxBufferedBytes for this session. */
  buffer?: BufferBudget;
  /** Told when the object store fenced the session, so the node stops serving it at once. */
  onFenced?: (stream: StreamId) => void;
  /**
   * False while the node's liveness lease has lapsed, or, given when a batch was accepted, when
   * it lapsed since: nothing is acknowledged (NodeLease).
   */
  acknowledgeable?: (acceptedAt?: number) => boolean;
}

interface Batch {
  bodies: string[];
  bytes: number;
  producer?: ProducerStamp;
  first?: number;
  /** When the session took it: a lease lapse since then forbids its acknowledgement. */
  acceptedAt: number;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/** 8 MiB of records per segment: a few appends of the largest size. */
export const DEFAULT_MAX_SEGMENT_BYTES = 8 * 1024 * 1024;

const LEASE_LAPSED = "this node's liveness lease lapsed (it was paused or cut off from the metadata), so it may have been failed over";

/** Why a session stopped taking appends; the engine reroutes a request that meets it. */
export class SessionNotWritableError extends Error {
  constructor(readonly stream: StreamId, readonly status: string) {
    super(`stream ${stream} session is ${status}`);
  }
}

/**
 * One stream's session on its owner, at one epoch. Appends go through a pipeline: queued, then
 * logged (offsets assigned and written to the WAL), then durable (written as one segment to the
 * ObjectStore), and only then acknowledged. Offsets are assigned at log time, so a failed WAL
 * write leaves no hole. `close` stops new appends, drains the pipeline and records the close in
 * the WAL; `kill` is a crash: nothing more is written, nothing more is acknowledged.
 */
export class StreamSession {
  private status: 'open' | 'closing' | 'closed' | 'dead' = 'open';
  private next: number;
  private durable: number;
  private readonly producers: ProducerMarks;
  /** Batches queued or in the pipeline, by producer key: a retry joins the original's promise. */
  private readonly inFlight = new Map<string, { seq: number; promise: Promise<AppendResult> }>();
  private queue: Batch[] = [];
  /** Batches taken from the queue and not yet answered (being logged or flushed). */
  private inPipeline: Batch[] = [];
  private readonly buffer: BufferBudget;
  private pumping?: Promise<void>;
  private pendingFlushedMark?: WalEntry;
  /** The records entry logged (or being logged) and not yet durable in the store. */
  private unflushed?: WalEntry;
  private closing?: Promise<ClosedSession>;
  private killedBy?: Error;
  /** The last segment write failed (the store is down); cleared by the next one stored. */
  private storeDown = false;
  /** Slot of the next segment's key at `durable` (above 0 only right after a takeover's fence). */
  private slot: number;
  /** The store refused a write: another node took the stream over. Set once, never cleared. */
  private fencedBy?: SegmentFencedError;

  constructor(
    readonly stream: StreamId,
    readonly epoch: number,
    tail: number,
    producers: Record<string, ProducerMark>,
    private readonly deps: SessionDeps,
    private readonly options: SessionOptions,
    slot = 0,
  ) {
    this.next = tail;
    this.durable = tail;
    this.slot = slot;
    this.producers = new ProducerMarks(producers, options.maxProducers);
    this.buffer = deps.buffer ?? new BufferBudget(options.maxBufferedBytes);
  }

  /** Opens a session: records it in the WAL before any append can be accepted. */
  static async open(
    stream: StreamId,
    epoch: number,
    tail: number,
    producers: Record<string, ProducerMark>,
    deps: SessionDeps,
    options: SessionOptions,
    slot = 0,
  ): Promise<StreamSession> {
    await deps.wal.append([{ t: 'open', stream, epoch, next: tail, producers, ...(slot > 0 ? { slot } : {}) }]);
    return new StreamSession(stream, epoch, tail, producers, deps, options, slot);
  }

  get writable(): boolean {
    return this.status === 'open';
  }

  get state(): 'open' | 'closing' | 'closed' | 'dead' {
    return this.status;
  }

  /** The object store refused this session's write: another node owns the stream's chain now. */
  get fenced(): boolean {
    return this.fencedBy !== undefined;
  }

  /** Offset the next accepted record will get. */
  get tail(): number {
    return this.next;
  }

  /** Every offset below this is in the object store. */
  get durableTail(): number {
    return this.durable;
  }

  /**
   * Takes a batch. A producer's `id` is its key (producer-marks.ts: the client's id within its
   * principal), and a principal other than the one holding the client's id is refused.
   */
  append(bodies: string[], producer?: ProducerStamp): Promise<AppendResult> {
    if (this.status !== 'open') return Promise.reject(new SessionNotWritableError(this.stream, this.status));
    if (this.deps.acknowledgeable?.() === false) {
      // Refused before it is logged (it can never appear later), and a duplicate is not
      // answered either: that too would be an acknowledgement. The client retries shortly,
      // here once the lease is renewed, or on the node that took the stream over.
      return Promise.reject(new AppendUnavailableError(this.stream, LEASE_LAPSED));
    }
    if (producer) {
      const named = parseProducerKey(producer.id);
      const holder = this.producers.holderOf(named.id);
      if (named.principal !== undefined && holder !== undefined && holder !== named.principal) {
        return Promise.reject(new ProducerHeldError(this.stream, named.id, named.principal));
      }
      const running = this.inFlight.get(producer.id);
      if (running && running.seq === producer.seq) return running.promise.then((r) => ({ ...r, duplicate: true }));
      const mark = this.producers.get(producer.id);
      const last = Math.max(mark?.seq ?? -1, running?.seq ?? -1);
      if (mark && producer.seq === mark.seq && !(running && running.seq > mark.seq)) {
        return Promise.resolve({
          stream: this.stream,
          epoch: this.epoch,
          first: mark.first,
          count: mark.count,
          duplicate: true,
        });
      }
      if (producer.seq <= last) {
        return Promise.reject(new StaleProducerSequenceError(this.stream, named.id, producer.seq, last));
      }
    }
    if (this.storeDown) {
      // The batch in flight waits for the store (it is logged with its offsets and must land
      // first); a new one would only wait behind it for as long as the outage lasts. Refused
      // before it is logged, it can never appear later: the client retries once the store is back.
      return Promise.reject(new AppendUnavailableError(this.stream, 'the object store is unavailable'));
    }
    const bytes = bodies.reduce((n, b) => n + b.length, 0);
    if (!this.buffer.tryTake(bytes)) {
      return Promise.reject(new AppendUnavailableError(this.stream, 'the node buffer is full while it flushes'));
    }
    const promise = new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ bodies, bytes, producer, acceptedAt: this.deps.clock.now(), resolve, reject });
    });
    if (producer) {
      const named = parseProducerKey(producer.id);
      if (named.principal !== undefined) this.producers.claim(named.id, named.principal);
      const entry = { seq: producer.seq, promise };
      this.inFlight.set(producer.id, entry);
      const forget = () => {
        if (this.inFlight.get(producer.id) === entry) this.inFlight.delete(producer.id);
      };
      promise.then(forget, forget);
    }
    this.pump();
    return promise;
  }

  /**
   * Stops taking appends, makes everything already accepted durable, and records the close in
   * the WAL. Idempotent: a second call returns the first one's outcome.
   */
  close(): Promise<ClosedSession> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  /** The process died: stop without writing anything more; unacknowledged appends fail. */
  kill(reason: Error): void {
    this.status = 'dead';
    this.killedBy = reason;
    const unanswered = [...this.inPipeline, ...this.queue];
    this.queue = [];
    this.inPipeline = [];
    for (const batch of unanswered) batch.reject(reason);
  }

  /** What the WAL must still hold for this session (see CompactingWal). */
  liveWalEntries(): WalEntry[] {
    if (this.status === 'dead') return [];
    if (this.status === 'closed') {
      return [{ t: 'closed', stream: this.stream, epoch: this.epoch, tail: this.next, producers: this.producerMarks() }];
    }
    const open: WalEntry = {
      t: 'open',
      stream: this.stream,
      epoch: this.epoch,
      next: this.durable,
      producers: this.producerMarks(),
      ...(this.slot > 0 ? { slot: this.slot } : {}),
    };
    return this.unflushed ? [open, this.unflushed] : [open];
  }

  producerMarks(): Record<string, ProducerMark> {
    return this.producers.toRecord();
  }

  private async closeOnce(): Promise<ClosedSession> {
    if (this.status === 'open') this.status = 'closing';
    while (this.pumping) await this.pumping;
    if (this.isDead()) throw this.fencedBy ?? new SessionNotWritableError(this.stream, 'dead');
    const closed: ClosedSession = {
      stream: this.stream,
      epoch: this.epoch,
      tail: this.next,
      producers: this.producerMarks(),
    };
    await this.deps.wal.append([{ t: 'closed', ...closed }]);
    this.status = 'closed';
    return closed;
  }

  private pump(): void {
    this.pumping ??= this.runPipeline().finally(() => {
      this.pumping = undefined;
      // Appends that arrived while the last cycle finished get their own cycle.
      if (this.queue.length > 0 && !this.isDead()) this.pump();
    });
  }

  private async runPipeline(): Promise<void> {
    while (this.queue.length > 0 && !this.isDead()) {
      const batches = this.takeBatches();
      this.inPipeline = batches;
      try {
        await this.log(batches);
      } catch (error) {
        const failure = this.killedBy ?? new AppendUnavailableError(this.stream, `the WAL failed: ${(error as Error).message}`);
        for (const b of batches) b.reject(failure);
        this.release(batches);
        continue;
      }
      await this.flush(batches);
      this.inPipeline = [];
    }
  }

  /** Status can change while a step awaits; this reads it fresh (and keeps the compiler honest). */
  private isDead(): boolean {
    return this.status === 'dead';
  }

  private takeBatches(): Batch[] {
    const taken: Batch[] = [];
    let records = 0;
    let bytes = 0;
    const maxBytes = this.options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES;
    while (this.queue.length > 0) {
      const batch = this.queue[0];
      if (taken.length > 0 && (records + batch.bodies.length > this.options.maxSegmentRecords || bytes + batch.bytes > maxBytes)) break;
      taken.push(this.queue.shift()!);
      records += batch.bodies.length;
      bytes += batch.bytes;
    }
    return taken;
  }

  /** Assigns offsets and writes the batches to the WAL; offsets are only consumed if that worked. */
  private async log(batches: Batch[]): Promise<void> {
    let next = this.next;
    const entries: WalEntry[] = [];
    if (this.pendingFlushedMark) entries.push(this.pendingFlushedMark);
    const stamps: BatchStamp[] = [];
    for (const batch of batches) {
      if (batch.producer) stamps.push({ ...batch.producer, first: next, count: batch.bodies.length });
      next += batch.bodies.length;
    }
    entries.push({
      t: 'records',
      stream: this.stream,
      epoch: this.epoch,
      first: this.next,
      bodies: batches.flatMap((b) => b.bodies),
      ...(stamps.length > 0 ? { stamps } : {}),
      ...(this.slot > 0 ? { slot: this.slot } : {}),
    });
    this.unflushed = entries[entries.length - 1];
    try {
      await this.deps.wal.append(entries);
    } catch (error) {
      this.unflushed = undefined;
      throw error;
    }
    this.pendingFlushedMark = undefined;
    let offset = this.next;
    for (const batch of batches) {
      batch.first = offset;
      if (batch.producer) this.remember(batch.producer, offset, batch.bodies.length);
      offset += batch.bodies.length;
    }
    this.next = next;
  }

  /**
   * Writes the logged batches as one segment, retrying until it is durable: the records are in
   * the WAL with their offsets, so they must reach the store before anything after them can.
   */
  private async flush(batches: Batch[]): Promise<void> {
    if (batches.length === 0) return;
    const first = batches[0].first!;
    const records = batches.flatMap((b) => b.bodies.map((body) => ({ body })));
    const stamps = batches.flatMap((b) => (b.producer ? [{ ...b.producer, first: b.first!, count: b.bodies.length }] : []));
    let delay = 20;
    for (;;) {
      if (this.isDead()) return;
      try {
        await writeSegment(
          this.deps.store,
          { stream: this.stream, epoch: this.epoch, first, records, ...(stamps.length > 0 ? { stamps } : {}) },
          this.slot,
        );
        break;
      } catch (error) {
        if (error instanceof SegmentFencedError) return this.fence(error);
        this.storeDown = true;
        this.deps.logger.warn({ stream: this.stream, first, err: error }, 'segment flush failed; retrying');
        await this.deps.clock.sleep(delay);
        delay = Math.min(delay * 2, 1000);
      }
    }
    this.storeDown = false;
    if (this.isDead()) return;
    this.slot = 0;
    this.durable = first + records.length;
    this.unflushed = undefined;
    this.pendingFlushedMark = { t: 'flushed', stream: this.stream, epoch: this.epoch, upTo: this.durable };
    this.release(batches);
    const oldest = Math.min(...batches.map((b) => b.acceptedAt));
    if (this.deps.acknowledgeable?.(oldest) === false) {
      // Stored, but this node may have been failed over while it waited: say nothing was
      // acknowledged. A retry with the same producer sequence finds the records (duplicate).
      for (const batch of batches) batch.reject(new AppendUnavailableError(this.stream, LEASE_LAPSED));
      return;
    }
    for (const batch of batches) {
      batch.resolve({ stream: this.stream, epoch: this.epoch, first: batch.first!, count: batch.bodies.length, duplicate: false });
    }
  }

  /**
   * Another node took the stream over and its fence is in the store: nothing this session holds
   * was stored, so nothing is acknowledged; every waiting append fails, and no more are taken.
   */
  private fence(cause: SegmentFencedError): void {
    this.fencedBy = cause;
    this.deps.logger.warn({ stream: this.stream, epoch: this.epoch, byEpoch: cause.byEpoch }, 'stream fenced by a takeover; appends refused');
    this.kill(new StreamFencedError(this.stream, this.deps.node));
    this.deps.onFenced?.(this.stream);
  }

  private release(batches: Batch[]): void {
    for (const b of batches) this.buffer.give(b.bytes);
  }

  private remember(producer: ProducerStamp, first: number, count: number): void {
    this.producers.set(producer.id, { seq: producer.seq, first, count });
  }
}
