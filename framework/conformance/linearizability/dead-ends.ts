import { isSubset } from './bitset.js';
import type { Operation } from './history.js';
import type { Model } from './model.js';
import type { StateIdentity } from './state-identity.js';

/** Model steps taken, shared by the search and these tables so that one budget covers both. */
export interface Meter {
  steps: number;
}

/**
 * Recognises configurations from which some returned operation can never be linearized, so the
 * search abandons them at once instead of exhausting every order of what remains first.
 *
 * The memo alone leaves a search exponential where many operations are concurrent: with 38
 * concurrent writes and a read after them, every subset of the writes is a distinct
 * configuration, and when the read's value cannot come last (a value overwritten, or never
 * written) all of them are tried. Here the state an operation needs is traced to the operations
 * that can produce it: an operation that is not legal in the current state, and whose every
 * producer is already linearized (or, unknown-outcome, applied), can never be linearized.
 *
 * The producers come from an over-approximation of the reachable states: every state some
 * sequence of the partition's operations, each any number of times, can reach from the initial
 * one. So the pruning is exact (it drops only configurations without a linearization), and
 * possible only for models with few states per history, such as a register (one per value
 * written); where the states multiply, building stops at a bound and the search goes on
 * without it.
 */
export class DeadEnds<S, I, O> {
  /** Per returned operation: its producers among returned operations not yet linearized. */
  private readonly waiting: Uint32Array;
  /** Per returned operation p: the returned operations p is a producer of. */
  private readonly consumers: number[][];
  /** Per operation: its unknown-outcome producers, as a set (undefined when none). */
  private readonly unknownProducers: Array<Uint32Array | undefined>;
  private readonly linearized: Uint8Array;
  /** Returned operations not yet linearized with no returned producer left. */
  private readonly orphans = new Set<number>();

  private constructor(
    private readonly model: Model<S, I, O>,
    private readonly ops: ReadonlyArray<Operation<I, O>>,
    private readonly meter: Meter,
    producers: Array<Set<number>>,
    words: number,
  ) {
    const n = ops.length;
    this.waiting = new Uint32Array(n);
    this.consumers = Array.from({ length: n }, () => []);
    this.unknownProducers = new Array<Uint32Array | undefined>(n);
    this.linearized = new Uint8Array(n);
    producers.forEach((of, o) => {
      for (const p of of) {
        if (ops[p].return !== undefined) this.consumers[p].push(o);
        else {
          const set = (this.unknownProducers[o] ??= new Uint32Array(words));
          set[p >>> 5] |= 1 << (p & 31);
        }
      }
    });
  }

  /**
   * Builds the tables, or undefined when the reachable states outgrow twice the operations, or
   * the budget runs out first. Costs about (states × operations) model steps, counted on `meter`.
   */
  static build<S, I, O>(
    model: Model<S, I, O>,
    ops: ReadonlyArray<Operation<I, O>>,
    identity: StateIdentity<S>,
    meter: Meter,
    budget: number,
  ): DeadEnds<S, I, O> | undefined {
    const bound = 2 * ops.length + 2;
    const states: S[] = [];
    const byKey = new Map<string, number>();
    const indexOf = (state: S): number => {
      const key = identity.key?.(state);
      const found =
        key !== undefined ? byKey.get(key) : states.findIndex((s) => identity.same(s, state));
      if (found !== undefined && found >= 0) return found;
      if (states.length >= bound) return -1;
      if (key !== undefined) byKey.set(key, states.length);
      states.push(state);
      return states.length - 1;
    };
    indexOf(model.init());
    // Breadth first over the states: which operations change some state into each one.
    const changersInto: Array<Set<number>> = [];
    for (let s = 0; s < states.length; s++) {
      for (let p = 0; p < ops.length; p++) {
        if (++meter.steps > budget) return undefined;
        const next = model.step(states[s], ops[p].input, ops[p].output);
        if (!next.ok) continue;
        const t = indexOf(next.state);
        if (t < 0) return undefined;
        // An operation that leaves the state as it found it produces nothing: the state was
        // already there before it.
        if (t !== s) (changersInto[t] ??= new Set()).add(p);
      }
    }
    // An operation's producers: those that can change some state into one it is legal in.
    const producers = ops.map(() => new Set<number>());
    for (let o = 0; o < ops.length; o++) {
      if (ops[o].return === undefined) continue;
      for (let t = 0; t < states.length; t++) {
        if (++meter.steps > budget) return undefined;
        if (!model.step(states[t], ops[o].input, ops[o].output).ok) continue;
        for (const p of changersInto[t] ?? []) if (p !== o) producers[o].add(p);
      }
    }
    return new DeadEnds(model, ops, meter, producers, Math.ceil(ops.length / 32) || 1);
  }

  /** Starts counting from the returned operations linearized at this point of the search. */
  reset(linearized: (op: number) => boolean): void {
    this.waiting.fill(0);
    this.orphans.clear();
    this.ops.forEach((_, p) => {
      this.linearized[p] = linearized(p) ? 1 : 0;
    });
    this.consumers.forEach((of, p) => {
      if (!this.linearized[p]) for (const o of of) this.waiting[o] += 1;
    });
    this.ops.forEach((op, o) => {
      if (op.return !== undefined && !this.linearized[o] && this.waiting[o] === 0)
        this.orphans.add(o);
    });
  }

  linearize(p: number): void {
    this.linearized[p] = 1;
    this.orphans.delete(p);
    for (const o of this.consumers[p])
      if (--this.waiting[o] === 0 && !this.linearized[o]) this.orphans.add(o);
  }

  /** Undoes `linearize(p)`: calls must come in the reverse order. */
  restore(p: number): void {
    this.linearized[p] = 0;
    for (const o of this.consumers[p]) if (this.waiting[o]++ === 0) this.orphans.delete(o);
    if (this.waiting[p] === 0) this.orphans.add(p);
  }

  /**
   * True when, in `state` with the unknown-outcome operations `applied`, some returned
   * operation not yet linearized is illegal and nothing left can make it legal.
   */
  stuck(state: S, applied: Uint32Array): boolean {
    for (const o of this.orphans) {
      const unknown = this.unknownProducers[o];
      if (unknown && !isSubset(unknown, applied)) continue;
      this.meter.steps += 1;
      if (!this.model.step(state, this.ops[o].input, this.ops[o].output).ok) return true;
    }
    return false;
  }
}
