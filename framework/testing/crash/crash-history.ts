/** Where an operation of the workload stood when the power went. */
export type Outcome = 'acknowledged' | 'in-flight';

export interface HistoryEntry<Op> {
  op: Op;
  outcome: Outcome;
}

interface Recorded<Op> {
  op: Op;
  startedAt: number;
  acknowledgedAt?: number;
}

/**
 * What a workload asked of the store and what the store acknowledged, each stamped with the
 * position in the operation log at that moment, so the checker can tell, for any crash point,
 * which operations had been acknowledged (their effects must survive), which were in flight
 * (their effects may or may not) and which had not started (their effects must be absent).
 */
export class CrashHistory<Op> {
  private readonly entries: Recorded<Op>[] = [];

  constructor(private readonly position: () => number) {}

  /** Notes the start of `op`; call `acknowledge` with the result once the store resolved it. */
  start(op: Op): { acknowledge(): void } {
    const entry: Recorded<Op> = { op, startedAt: this.position() };
    this.entries.push(entry);
    return { acknowledge: () => void (entry.acknowledgedAt ??= this.position()) };
  }

  /** Runs `call` as `op`: acknowledged when it resolves; a rejection stays in flight and is rethrown. */
  async run<T>(op: Op, call: () => Promise<T>): Promise<T> {
    const ticket = this.start(op);
    const result = await call();
    ticket.acknowledge();
    return result;
  }

  /** The operations started before a crash after `point` log operations, in the order they started. */
  at(point: number): HistoryEntry<Op>[] {
    return this.entries
      .filter((e) => e.startedAt <= point)
      .map((e) => ({ op: e.op, outcome: e.acknowledgedAt !== undefined && e.acknowledgedAt <= point ? 'acknowledged' : 'in-flight' }));
  }

  get size(): number {
    return this.entries.length;
  }
}
