import type { Etcd3, Lease, Watcher } from 'etcd3';
import type { Clock, Timer, Logger, Leadership, Rng } from '@baton/contracts';
import { describeEtcdError } from './etcd-errors.js';
import type { LogKeys } from './log-keys.js';
import { jittered } from './jitter.js';
import { atMost } from './wait-until.js';

export interface ElectionSettings {
  leaseTtlSeconds: number;
  requestTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
}

/**
 * Leadership among the members, from an etcd election: each candidate holds a key under the
 * election prefix bound to its own lease; the candidate whose key is oldest (lowest create
 * revision) leads until its key goes, by resignation or because its lease expired (the member
 * died or lost etcd for longer than the TTL). The leader key's create revision is the term: it
 * only grows from one leader to the next. Leadership here is for work only one member should do
 * (snapshots, projections); safety never depends on it, the log's compare-and-append does that.
 */
export class LeaderElection {
  private lease?: Lease;
  private ownKey?: string;
  private candidate = false;
  private watcher?: Watcher;
  private retryTimer?: Timer;
  private refreshTimer?: Timer;
  private campaignDelay = 0;
  private refreshing = false;
  private refreshAgain = false;
  private stopped = false;
  private current: Leadership;
  private readonly listeners = new Set<(leadership: Leadership) => void>();

  constructor(
    private readonly client: Etcd3,
    private readonly keys: LogKeys,
    private readonly self: string,
    private readonly settings: ElectionSettings,
    private readonly clock: Clock,
    private readonly rng: Rng,
    private readonly logger: Logger,
  ) {
    this.current = { self, isLeader: false, term: 0 };
  }

  leadership(): Leadership {
    return { ...this.current };
  }

  onChange(fn: (leadership: Leadership) => void): () => void {
    const subscription = (leadership: Leadership) => fn(leadership);
    this.listeners.add(subscription);
    return () => void this.listeners.delete(subscription);
  }

  /** Starts observing who leads. */
  start(): void {
    const watcher = this.client.watch().prefix(this.keys.electionPrefix).watcher();
    this.watcher = watcher;
    watcher.on('put', () => this.refresh());
    watcher.on('delete', () => this.refresh());
    watcher.on('connected', () => this.refresh());
    watcher.on('error', (error: unknown) => {
      this.logger.warn({ error: describeEtcdError(error) }, 'election watch failed; re-opening it');
      void watcher.cancel().catch(() => undefined);
      if (!this.stopped) this.start();
    });
    this.refresh();
  }

  /** Resolves once a leader is known, or after `ms` if none is. */
  async leaderKnown(ms: number): Promise<void> {
    if (this.current.leader !== undefined) return;
    let unsubscribe = () => {};
    const known = new Promise<void>((resolve) => {
      unsubscribe = this.onChange((leadership) => {
        if (leadership.leader !== undefined) resolve();
      });
    });
    await atMost(known, ms, this.clock);
    unsubscribe();
  }

  /** Campaigns while `wanted` (this member is a voter), resigns otherwise. */
  setCandidate(wanted: boolean): void {
    if (this.stopped || wanted === this.candidate) return;
    this.candidate = wanted;
    if (wanted) void this.campaign();
    else void this.resign();
  }

  /**
   * Gives up this member's place (and leadership, if it leads) and stands again behind every
   * other candidate, so another member leads in a higher term.
   */
  async stepDown(): Promise<void> {
    await this.resign();
    if (this.candidate && !this.stopped) await this.campaign();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retryTimer?.cancel();
    this.refreshTimer?.cancel();
    await this.resign();
    if (this.watcher)
      await atMost(this.watcher.cancel(), this.settings.requestTimeoutMs, this.clock);
    this.watcher = undefined;
    this.update({ self: this.self, isLeader: false, leader: undefined, term: this.current.term });
  }

  private async campaign(): Promise<void> {
    if (this.stopped || !this.candidate || this.lease) return;
    const lease = this.client.lease(this.settings.leaseTtlSeconds, { autoKeepAlive: true });
    this.lease = lease;
    lease.on('lost', (error: unknown) => {
      if (this.lease !== lease) return;
      const log = this.ownKey === undefined ? this.logger.debug : this.logger.warn;
      log.call(
        this.logger,
        { error: describeEtcdError(error) },
        'election lease lost; standing again',
      );
      this.lease = undefined;
      this.ownKey = undefined;
      // etcd may be unreachable, so do not wait for a read to say so: this member leads no more.
      this.update({ ...this.current, isLeader: false, leader: undefined });
      this.refresh();
      this.retryLater();
    });
    try {
      const id = await lease.grant();
      const key = `${this.keys.electionPrefix}${id}`;
      await this.client
        .if(key, 'Create', '==', 0)
        .then(this.client.put(key).value(this.self).lease(id))
        .options({ deadline: new Date(this.clock.now() + this.settings.requestTimeoutMs) })
        .commit();
      if (this.lease !== lease) return;
      this.ownKey = key;
      this.campaignDelay = 0;
      this.refresh();
    } catch (error) {
      if (this.lease !== lease) return;
      this.logger.debug({ error: describeEtcdError(error) }, 'campaign failed; retrying');
      this.lease = undefined;
      lease.release();
      this.retryLater();
    }
  }

  /** Campaigns again after a back-off that doubles up to half the lease TTL, with jitter. */
  private retryLater(): void {
    if (this.stopped || !this.candidate) return;
    this.retryTimer?.cancel();
    const ceiling = Math.max(this.settings.retryMaxMs, (this.settings.leaseTtlSeconds * 1000) / 2);
    this.campaignDelay = Math.min(
      ceiling,
      Math.max(this.settings.retryMinMs, this.campaignDelay * 2),
    );
    this.retryTimer = this.clock.setTimer(
      jittered(this.campaignDelay, this.rng),
      () => void this.campaign(),
    );
  }

  private async resign(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    this.ownKey = undefined;
    if (lease) {
      // Revoking deletes the key at once, so the next candidate leads without waiting a TTL.
      await lease
        .revoke({ deadline: new Date(this.clock.now() + this.settings.requestTimeoutMs) })
        .catch(() => lease.release());
    }
    this.refresh();
  }

  /** Reads who leads now: the oldest candidate key. Coalesces bursts of events into one read. */
  private refresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    void (async () => {
      try {
        do {
          this.refreshAgain = false;
          if (this.stopped) return;
          const response = await this.client
            .getAll()
            .prefix(this.keys.electionPrefix)
            .sort('Create', 'Ascend')
            .limit(1)
            .options({ deadline: new Date(this.clock.now() + this.settings.requestTimeoutMs) })
            .exec();
          const leaderKv = response.kvs[0];
          if (this.stopped) return;
          if (!leaderKv) {
            this.update({
              self: this.self,
              isLeader: false,
              leader: undefined,
              term: this.current.term,
            });
            continue;
          }
          const key = leaderKv.key.toString('utf8');
          this.update({
            self: this.self,
            isLeader: this.ownKey !== undefined && key === this.ownKey,
            leader: leaderKv.value.toString('utf8'),
            term: Math.max(this.current.term, Number(leaderKv.create_revision)),
          });
        } while (this.refreshAgain);
      } catch (error) {
        this.logger.debug(
          { error: describeEtcdError(error) },
          'could not read the election; will retry',
        );
        if (!this.stopped && !this.refreshTimer) {
          this.refreshTimer = this.clock.setTimer(this.settings.retryMaxMs, () => {
            this.refreshTimer = undefined;
            this.refresh();
          });
        }
      } finally {
        this.refreshing = false;
      }
    })();
  }

  private update(next: Leadership): void {
    const previous = this.current;
    if (
      previous.isLeader === next.isLeader &&
      previous.leader === next.leader &&
      previous.term === next.term
    ) {
      return;
    }
    this.current = next;
    for (const listener of [...this.listeners]) {
      try {
        listener({ ...next });
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
