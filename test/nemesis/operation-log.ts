import { performance } from 'node:perf_hooks';

export type Outcome = 'ok' | 'fail' | 'unknown';

/**
 * One client operation of a run, as Jepsen records it: invoked, then ok (it took effect, with
 * this result), fail (it certainly did not take effect) or unknown (it may have, at any time
 * after its invocation, or never). `invokedAt`/`completedAt` are milliseconds since the run
 * started; `invokeSeq`/`completeSeq` one counter shared by every event of the run, which in one
 * JavaScript thread is exactly real-time order (what a linearizability check needs).
 */
export interface OperationRecord<I = unknown, O = unknown> {
  client: string;
  /** What the operation is ("write", "cas", "append", "transfer"...). */
  f: string;
  input: I;
  invokedAt: number;
  invokeSeq: number;
  outcome?: Outcome;
  output?: O;
  completedAt?: number;
  completeSeq?: number;
  /** Why it failed or is unknown, or which member answered. */
  detail?: string;
}

export interface PendingRecord<O> {
  ok(output: O, detail?: string): void;
  fail(detail: string): void;
  unknown(detail: string): void;
}

/** The history of one run: every client's operations, in invocation order. */
export class OperationLog {
  readonly records: OperationRecord[] = [];
  private seq = 0;
  private readonly origin = performance.now();

  /** Milliseconds since the run started. */
  now(): number {
    return Math.round((performance.now() - this.origin) * 10) / 10;
  }

  invoke<I, O>(client: string, f: string, input: I): PendingRecord<O> {
    const record: OperationRecord<I, O> = {
      client,
      f,
      input,
      invokedAt: this.now(),
      invokeSeq: this.seq++,
    };
    this.records.push(record);
    const settle = (outcome: Outcome, output: O | undefined, detail: string | undefined) => {
      if (record.outcome)
        throw new Error(`operation ${record.invokeSeq} of ${client} was settled twice`);
      record.outcome = outcome;
      if (output !== undefined) record.output = output;
      if (detail !== undefined) record.detail = detail;
      record.completedAt = this.now();
      record.completeSeq = this.seq++;
    };
    return {
      ok: (output, detail) => settle('ok', output, detail),
      fail: (detail) => settle('fail', undefined, detail),
      unknown: (detail) => settle('unknown', undefined, detail),
    };
  }

  /** Operations not settled when the run ended count as unknown: they may still take effect. */
  settleStragglers(): void {
    for (const record of this.records) {
      if (!record.outcome) {
        record.outcome = 'unknown';
        record.detail = 'still in flight when the run ended';
      }
    }
  }

  of<I, O>(f: string): Array<OperationRecord<I, O>> {
    return this.records.filter((r) => r.f === f) as Array<OperationRecord<I, O>>;
  }
}
