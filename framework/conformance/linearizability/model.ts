import type { Operation } from './history.js';

/**
 * A sequential specification for the checker, in the manner of Porcupine: from a state, an
 * operation with this input may legally produce this output, leading to the next state.
 * `step` must not mutate `state` (the search backtracks to it).
 */
export interface Model<S, I, O> {
  /**
   * Splits a history into independent parts checked one by one (e.g. one per key of a
   * key-value store): a history is linearizable iff every part is, and small parts are what
   * keeps the search fast. Default: the whole history is one part.
   */
  partition?(history: ReadonlyArray<Operation<I, O>>): Array<Array<Operation<I, O>>>;
  init(): S;
  /**
   * Whether `input` producing `output` is legal in `state`, and the state after it. `output`
   * is undefined for an operation whose outcome is unknown: any output is then acceptable.
   */
  step(state: S, input: I, output: O | undefined): { ok: boolean; state: S };
  /**
   * True for an operation that never changes the state (a read). Such an operation with an
   * unknown outcome constrains nothing and is left out of the search, which keeps it fast.
   */
  isReadOnly?(input: I): boolean;
  /**
   * A string equal for equal states, and only for them: the memo's key, so the search never
   * explores one configuration twice. The cheapest choice when there is one.
   */
  stateKey?(state: S): string;
  /**
   * Whether two states are equal, as Porcupine's models say it: used when there is no
   * `stateKey` (the memo then compares states within a bucket of the same linearized set).
   * Without either, states are compared by JSON.stringify, which is right only for plain data
   * built in one key order: a stricter equality than the model's only makes the memo miss.
   */
  equal?(a: S, b: S): boolean;
  /** How to print an operation in a failure report. Default: JSON of input and output. */
  describe?(operation: Operation<I, O>): string;
}
