import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import type { Clock, Timer, Logger, Rng } from '@baton/contracts';
import { describeEtcdError } from './etcd-errors.js';
import type { LogKeys } from './log-keys.js';
import type { ReplicaSnapshot } from './replica.js';
import type { SnapshotStore } from './snapshot-store.js';
import { jittered } from './jitter.js';
import { atMost } from './wait-until.js';

/** Where the follower delivers the log, strictly in order, each entry exactly once. */
export interface FollowerSink {
  /** The sequence number of the last entry applied (or restored from a snapshot). */
  readonly appliedSeq: number;
  applyEntry(seq: number, revision: number, value: Buffer): void;
  restoreSnapshot(snapshot: ReplicaSnapshot): void;
  /** The log cannot be followed any more (a hole no snapshot covers, a throwing state machine). */
  fail(error: unknown): void;
}

export interface FollowerSettings {
  pageSize: number;
  requestTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
}

/** The log has a hole that no snapshot covers: someone deleted entries under the prefix. */
export class LogHoleError extends Error {}

/**
 * Follows the log in etcd and hands every entry to the sink in sequence order. A watch streams
 * new entries; a range read ("catch-up") fetches whatever is missing, and runs at start, after
 * every watch reconnect, whenever the watch skips a sequence number, and on request. Because
 * entries are keyed by a dense sequence number, a skipped entry is always noticed and fetched and
 * a repeated one always dropped, whatever the watch replays after a reconnect. When the entries
 * wanted were compacted away, the follower restores the snapshot that covers them.
 */
export class LogFollower {
  private watcher?: Watcher;
  private queue: IKeyValue[] = [];
  private work: Promise<void> = Promise.resolve();
  private retryTimer?: Timer;
  private retryDelay: number;
  private stopped = false;
  private failed = false;

  constructor(
    private readonly client: Etcd3,
    private readonly keys: LogKeys,
    private readonly snapshots: SnapshotStore,
    private readonly sink: FollowerSink,
    private readonly settings: FollowerSettings,
    private readonly clock: Clock,
    private readonly rng: Rng,
    private readonly logger: Logger,
  ) {
    this.retryDelay = settings.retryMinMs;
  }

  /** Catches up with the log, then watches it. Throws when etcd cannot be read. */
  async start(): Promise<void> {
    const revision = await this.serial(() => this.catchUp());
    this.openWatch(revision + 1);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retryTimer?.cancel();
    const watcher = this.watcher;
    this.watcher = undefined;
    if (watcher) await atMost(watcher.cancel(), this.settings.requestTimeoutMs, this.clock);
    await this.work.catch(() => undefined);
  }

  /**
   * Reads the log now and applies anything the watch has not delivered yet: used by linearizable
   * reads and by proposers whose committed entry is late. Rejects when etcd cannot be read.
   */
  async sync(): Promise<void> {
    await this.serial(async () => {
      await this.catchUp();
    });
  }

  // ---- watch ---------------------------------------------------------------------------------

  private openWatch(fromRevision: number): void {
    if (this.stopped) return;
    const watcher = this.client
      .watch()
      .prefix(this.keys.logPrefix)
      .startRevision(String(fromRevision))
      .watcher();
    this.watcher = watcher;
    watcher.on('put', (kv: IKeyValue) => {
      if (this.watcher !== watcher) return;
      this.queue.push(kv);
      this.scheduleDrain();
    });
    // After a reconnect the client resumes from the last revision it heard of, which can be past
    // entries it never delivered: a catch-up read closes any such gap.
    watcher.on('connected', () => {
      if (this.watcher === watcher) this.scheduleCatchUp();
    });
    watcher.on('disconnected', (error: unknown) => {
      this.logger.debug({ error: describeEtcdError(error) }, 'log watch disconnected; resuming');
    });
    watcher.on('error', (error: unknown) => {
      // Cancelled by etcd (e.g. the start revision was compacted): watch anew after a catch-up.
      if (this.watcher !== watcher) return;
      this.logger.warn({ error: describeEtcdError(error) }, 'log watch failed; re-opening it');
      this.watcher = undefined;
      void watcher.cancel().catch(() => undefined);
      void this.serial(() => this.catchUp()).then(
        (revision) => this.openWatch(revision + 1),
        () => this.scheduleRewatch(),
      );
    });
  }

  private scheduleRewatch(): void {
    if (this.stopped) return;
    this.retryTimer?.cancel();
    this.retryTimer = this.clock.setTimer(this.nextDelay(), () => {
      void this.serial(() => this.catchUp()).then(
        (revision) => this.openWatch(revision + 1),
        () => this.scheduleRewatch(),
      );
    });
  }

  private scheduleDrain(): void {
    void this.serial(() => this.drain()).catch(() => this.scheduleCatchUpRetry());
  }

  private scheduleCatchUp(): void {
    void this.serial(() => this.catchUp()).catch(() => this.scheduleCatchUpRetry());
  }

  private scheduleCatchUpRetry(): void {
    if (this.stopped || this.failed) return;
    this.retryTimer?.cancel();
    this.retryTimer = this.clock.setTimer(this.nextDelay(), () => this.scheduleCatchUp());
  }

  private nextDelay(): number {
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.settings.retryMaxMs, this.retryDelay * 2);
    return jittered(delay, this.rng);
  }

  // ---- applying in order ---------------------------------------------------------------------

  /** Runs jobs one at a time, so entries reach the sink in order whoever fetched them. */
  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.work.then(() => {
      if (this.stopped || this.failed) throw new Error('the log follower is stopped');
      return job();
    });
    this.work = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const kv = this.queue.shift()!;
      const seq = this.keys.seqOf(kv.key.toString('utf8'));
      if (seq === undefined || seq <= this.sink.appliedSeq) continue;
      if (seq === this.sink.appliedSeq + 1) {
        this.deliver(seq, kv);
        continue;
      }
      // The watch skipped entries: read them (this entry included) from the log.
      this.queue.unshift(kv);
      await this.catchUp();
      this.queue = this.queue.filter(
        (queued) => (this.keys.seqOf(queued.key.toString('utf8')) ?? 0) > this.sink.appliedSeq,
      );
    }
  }

  /** Applies every entry after the applied one; returns the etcd revision the read saw. */
  private async catchUp(): Promise<number> {
    for (;;) {
      const from = this.sink.appliedSeq + 1;
      const page = await this.client
        .getAll()
        .inRange({ start: this.keys.entry(from), end: this.keys.logEnd })
        .sort('Key', 'Ascend')
        .limit(this.settings.pageSize)
        .options({ deadline: new Date(this.clock.now() + this.settings.requestTimeoutMs) })
        .exec();
      const revision = Number(page.header.revision);
      if (page.kvs.length === 0) {
        this.caughtUp();
        return revision;
      }
      const first = this.keys.seqOf(page.kvs[0].key.toString('utf8'));
      if (first !== undefined && first > from) {
        await this.restoreCovering(from, first);
        continue;
      }
      for (const kv of page.kvs) {
        const seq = this.keys.seqOf(kv.key.toString('utf8'));
        if (seq === undefined || seq <= this.sink.appliedSeq) continue;
        if (seq !== this.sink.appliedSeq + 1) break; // compaction raced this page: read again
        this.deliver(seq, kv);
      }
      if (!page.more) {
        this.caughtUp();
        return revision;
      }
    }
  }

  /** Entries from `from` were compacted: load the snapshot that covers them. */
  private async restoreCovering(from: number, firstPresent: number): Promise<void> {
    const snapshot = await this.snapshots.read();
    if (!snapshot || snapshot.seq < firstPresent - 1 || snapshot.seq < from) {
      const error = new LogHoleError(
        `log entries ${from}..${firstPresent - 1} under ${this.keys.logPrefix} are missing and no snapshot covers them ` +
          `(snapshot at ${snapshot?.seq ?? 'none'}): were keys deleted by hand? Restore the prefix from a backup`,
      );
      this.fail(error);
      throw error;
    }
    this.logger.info(
      { seq: snapshot.seq },
      'restoring a snapshot: the entries after the applied one were compacted',
    );
    try {
      this.sink.restoreSnapshot(snapshot);
    } catch (error) {
      this.fail(error);
      throw error;
    }
  }

  private deliver(seq: number, kv: IKeyValue): void {
    try {
      this.sink.applyEntry(seq, Number(kv.create_revision), kv.value);
    } catch (error) {
      this.fail(error);
      throw error;
    }
  }

  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.sink.fail(error);
  }

  private caughtUp(): void {
    this.retryDelay = this.settings.retryMinMs;
  }
}
