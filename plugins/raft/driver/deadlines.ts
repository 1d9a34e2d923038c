/** What a deadline expires. */
export interface Expirable {
  expire(): void;
}

/** A deadline registered with `Deadlines`: hand it back to `cancel`. */
export interface Deadline {
  readonly at: number;
}

interface Slot extends Deadline {
  target: Expirable;
  /** Position in the heap, -1 once cancelled or fired. */
  pos: number;
}

/**
 * Many deadlines behind one clock-driven sweep instead of one timer each: a member may hold
 * thousands of proposals in flight, and arming and cancelling a timer for every one of them
 * costs more than the proposal itself. A binary min-heap on the deadline with removal by
 * position, so a settled proposal leaves at once and nothing it holds outlives it. Deadlines
 * fire from `sweep`, so they are as precise as the sweep is frequent (the driver sweeps every
 * tick).
 */
export class Deadlines {
  private readonly heap: Slot[] = [];

  get size(): number {
    return this.heap.length;
  }

  add(at: number, target: Expirable): Deadline {
    const slot: Slot = { at, target, pos: this.heap.length };
    this.heap.push(slot);
    this.up(slot.pos);
    return slot;
  }

  /** Forgets a deadline; a no-op once it fired or was cancelled. */
  cancel(deadline: Deadline): void {
    this.remove(deadline as Slot);
  }

  /** Fires, earliest first, every deadline at or before `now`. */
  sweep(now: number): void {
    while (this.heap.length > 0 && this.heap[0].at <= now) {
      const slot = this.heap[0];
      this.remove(slot);
      slot.target.expire();
    }
  }

  private remove(slot: Slot): void {
    const i = slot.pos;
    if (i < 0) return;
    slot.pos = -1;
    const last = this.heap.pop()!;
    if (last === slot) return;
    this.heap[i] = last;
    last.pos = i;
    this.down(i);
    this.up(last.pos);
  }

  private up(i: number): void {
    const heap = this.heap;
    const slot = heap[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (heap[p].at <= slot.at) break;
      heap[i] = heap[p];
      heap[i].pos = i;
      i = p;
    }
    heap[i] = slot;
    slot.pos = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const slot = heap[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && heap[r].at < heap[l].at ? r : l;
      if (heap[c].at >= slot.at) break;
      heap[i] = heap[c];
      heap[i].pos = i;
      i = c;
    }
    heap[i] = slot;
    slot.pos = i;
  }
}
