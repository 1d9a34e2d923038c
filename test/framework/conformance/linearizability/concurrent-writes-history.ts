import type { KvCommand, KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import type { Operation } from '@baton/conformance/internal/linearizability/history.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

export type Op = Operation<KvCommand, KvResult>;

export interface ConcurrentWrites {
  /** The writes, in call order, then the read. */
  history: Op[];
  /** The register's value once every write that took effect did: what the read returns. */
  finalValue: string | null;
  /**
   * Value of an acknowledged write that another acknowledged write reports having replaced
   * (the first in effect order). That one must come right after it, so unless `bare` a read of
   * it at the end is stale.
   */
  overwritten: string;
}

/**
 * The history a Jepsen-style run of a replicated register produces when an election falls in
 * the middle of a burst of writes: one key, `writes` puts with distinct values all concurrent
 * (every call before any return), `lost` of them never answered (unknown outcome: no return and
 * no output, as the register workload records a timed-out call), then one read after all of
 * them. A seeded order says which writes took effect and in what order; a lost write takes
 * effect or not, at random. An acknowledged put reports the value it replaced, as the register
 * answers, or, with `bare`, nothing (a Jepsen register's plain "ok"). The read returns the final
 * value, so the history is linearizable.
 */
export function concurrentWritesHistory(options: {
  writes: number;
  lost: number;
  seed: number;
  bare?: boolean;
}): ConcurrentWrites {
  const rng = new SeededRng(options.seed);
  const order = Array.from({ length: options.writes }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const lost = new Set<number>();
  while (lost.size < options.lost) lost.add(rng.int(options.writes));
  const value = (i: number) => `v${i}`;
  const previous = new Map<number, string | null>();
  let current: string | null = null;
  let overwritten: string | undefined;
  let acknowledgedLast = false;
  for (const i of order) {
    if (lost.has(i) && rng.chance(0.5)) continue;
    previous.set(i, current);
    if (overwritten === undefined && acknowledgedLast && !lost.has(i)) overwritten = current!;
    acknowledgedLast = !lost.has(i);
    current = value(i);
  }
  const history: Op[] = [];
  let time = options.writes;
  for (let i = 0; i < options.writes; i++) {
    const op: Op = { client: i, input: { op: 'put', key: 'k', value: value(i) }, call: i };
    if (!lost.has(i)) {
      op.return = time++;
      if (!options.bare) op.output = { op: 'put', previous: previous.get(i) ?? null };
    }
    history.push(op);
  }
  history.push({
    client: 'reader',
    input: { op: 'get', key: 'k' },
    call: time + 1,
    return: time + 2,
    output: { op: 'get', value: current },
  });
  if (overwritten === undefined) {
    throw new Error(`seed ${options.seed}: no acknowledged write replaced another; pick another`);
  }
  return { history, finalValue: current, overwritten };
}

/** The same history with the final read's answer replaced. */
export function withFinalRead(history: Op[], value: string | null): Op[] {
  const read = history[history.length - 1];
  return [...history.slice(0, -1), { ...read, output: { op: 'get', value } }];
}
