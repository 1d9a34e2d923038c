import type { Clock, Timer } from '@baton/contracts/internal/clock.js';
import type { ObjectStore } from '@baton/contracts/internal/object-store.js';
import type { StreamConsensus } from '@baton/stream-transfer/internal/stream-node.js';

/**
 * A node's process frozen in place (a long GC pause, SIGSTOP, a VM migration): while paused its
 * timers do not fire, it starts no store or metadata call, and it hears nothing; calls it made
 * before the pause still take effect where they went (a segment put lands in the store), but it
 * learns of their outcome only once it resumes. Its clients still reach it: their requests wait
 * at the door and run on resume, with the time read then. The node's clock, store and consensus
 * are passed through `clock`, `store` and `consensus` so the whole process is paused at once.
 */
export class ProcessPause {
  private waiting: Array<() => void> = [];
  private pausedSince?: number;

  get paused(): boolean {
    return this.pausedSince !== undefined;
  }

  pause(now: number): void {
    this.pausedSince ??= now;
  }

  resume(): void {
    this.pausedSince = undefined;
    const waiting = this.waiting;
    this.waiting = [];
    for (const go of waiting) go();
  }

  /** Resolves at once when running, else on resume. */
  door(): Promise<void> {
    if (!this.paused) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Runs `fn` now, or on resume if paused. */
  private later(fn: () => void): void {
    if (this.paused) this.waiting.push(fn);
    else fn();
  }

  /** `call` starts only while running, and its outcome is seen only while running. */
  async through<T>(call: () => Promise<T>): Promise<T> {
    await this.door();
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await call() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    await this.door();
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  clock(inner: Clock): Clock {
    return {
      now: () => inner.now(),
      setTimer: (ms, fn): Timer => inner.setTimer(ms, () => this.later(fn)),
      sleep: (ms, signal) => this.through(() => inner.sleep(ms, signal)),
    };
  }

  store(inner: ObjectStore): ObjectStore {
    return {
      supports: inner.supports,
      put: (key, bytes, options) => this.through(() => inner.put(key, bytes, options)),
      get: (key) => this.through(() => inner.get(key)),
      head: (key) => this.through(() => inner.head(key)),
      list: (prefix, options) => this.through(() => inner.list(prefix, options)),
      delete: (key) => this.through(() => inner.delete(key)),
    };
  }

  consensus(inner: StreamConsensus): StreamConsensus {
    return {
      propose: (command, options) => this.through(() => inner.propose(command, options)),
      read: () => this.through(() => inner.read()),
      view: () => inner.view(),
      watch: (fn) => inner.watch((view, entry) => this.later(() => fn(view, entry))),
      leadership: () => inner.leadership(),
      onLeadership: (fn) => inner.onLeadership((l) => this.later(() => fn(l))),
      membership: () => inner.membership(),
      addVoter: (member, options) => this.through(() => inner.addVoter(member, options)),
      removeVoter: (member, options) => this.through(() => inner.removeVoter(member, options)),
    };
  }
}
