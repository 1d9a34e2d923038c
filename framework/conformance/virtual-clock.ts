import type { Clock, Timer } from '@baton/contracts';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * Virtual time: timers fire only when the test advances the clock, in order of due time (ties in
 * the order they were armed), so a run is a pure function of its seed. `advance` runs every timer
 * due up to the target time, including ones armed by timers that fired on the way.
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly queue: Pending[] = [];

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const entry: Pending = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.insert(entry);
    return { cancel: () => void (entry.cancelled = true) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        timer.cancel();
        reject(signal!.reason);
      };
      const timer = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Due time of the next live timer, if any. */
  nextDue(): number | undefined {
    while (this.queue.length > 0 && this.queue[0].cancelled) this.queue.shift();
    return this.queue[0]?.at;
  }

  /** Fires the earliest live timer (moving time to it); false when none is armed. */
  step(): boolean {
    const due = this.nextDue();
    if (due === undefined) return false;
    const entry = this.queue.shift()!;
    this.current = Math.max(this.current, entry.at);
    entry.fn();
    return true;
  }

  /** Moves time forward by `ms`, firing every timer due on the way, synchronously. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (let due = this.nextDue(); due !== undefined && due <= target; due = this.nextDue()) {
      this.step();
    }
    this.current = target;
  }

  /**
   * Like `advance`, but lets promise continuations run between timers, so async code woken by a
   * timer (an awaited sleep) can arm the next one before time moves on.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.current + ms;
    await flushMicrotasks();
    for (let due = this.nextDue(); due !== undefined && due <= target; due = this.nextDue()) {
      this.step();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  private insert(entry: Pending): void {
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const q = this.queue[mid];
      if (q.at < entry.at || (q.at === entry.at && q.seq < entry.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, entry);
  }
}

/** Lets pending promise reactions run (a few turns, for chains of awaits). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}
