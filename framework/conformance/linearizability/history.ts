/**
 * One client operation as observed from outside: when it was called, when (and with what) it
 * returned. Times only need to be comparable; the recorder below uses a logical counter, which
 * in one JavaScript thread is exactly real-time order.
 *
 * An operation whose outcome is unknown (the client gave up, or got OutcomeUnknownError) has no
 * `return`: it may have taken effect at any moment after its call, even after the client gave
 * up, or never. Leave its `output` undefined too, unless it is truly known. An operation known
 * NOT to have taken effect (NotAppendedError) belongs in no history at all.
 */
export interface Operation<I, O> {
  client: string | number;
  input: I;
  call: number;
  output?: O;
  return?: number;
}

/** A pending operation in a recorder: settle it exactly once. */
export interface PendingOperation<O> {
  /** The operation returned `output`. */
  ok(output: O): void;
  /** The operation's fate is unknown (it may take effect later, or never). */
  unknown(): void;
  /** The operation certainly had no effect: it is left out of the history. */
  failed(): void;
}

/** Records a concurrent history as clients call and return, for the checker to judge. */
export class HistoryRecorder<I, O> {
  private time = 0;
  private readonly operations: Array<Operation<I, O> | undefined> = [];
  private unsettled = 0;

  invoke(client: string | number, input: I): PendingOperation<O> {
    const slot = this.operations.length;
    this.operations.push({ client, input, call: this.time++ });
    this.unsettled += 1;
    let settled = false;
    const settle = (change: (op: Operation<I, O>) => Operation<I, O> | undefined) => {
      if (settled) throw new Error(`operation ${slot} of client ${client} was settled twice`);
      settled = true;
      this.unsettled -= 1;
      this.operations[slot] = change(this.operations[slot]!);
    };
    return {
      ok: (output) => settle((op) => ({ ...op, output, return: this.time++ })),
      unknown: () => settle((op) => op),
      failed: () => settle(() => undefined),
    };
  }

  /** Operations still in flight (they count as unknown outcomes in `history`). */
  get pending(): number {
    return this.unsettled;
  }

  history(): Array<Operation<I, O>> {
    return this.operations.filter((op): op is Operation<I, O> => op !== undefined);
  }
}
