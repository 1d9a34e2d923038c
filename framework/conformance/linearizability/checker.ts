import type { Operation } from './history.js';
import type { Model } from './model.js';
import { searchPartition } from './search.js';

export interface CheckOptions {
  /**
   * Search steps (model steps tried) allowed per partition before giving up on it with outcome
   * 'unknown' (default 5 million, some seconds). A test must treat 'unknown' as a failure to
   * decide, never as a pass.
   */
  maxStepsPerPartition?: number;
  /**
   * Search steps allowed over the whole history (default: no bound beyond the per-partition
   * one). Partitions left when it runs out are undecided, so the outcome is 'unknown' unless
   * one already searched is illegal. Steps, not time: the same history always gets the same
   * answer.
   */
  maxSteps?: number;
}

export type CheckOutcome = 'ok' | 'illegal' | 'unknown';

export interface IllegalPartition<I, O> {
  /** The operations of the part that has no linearization. */
  operations: Array<Operation<I, O>>;
  /** The longest legal order found, a prefix every linearization attempt got stuck after. */
  longestLinearization: Array<Operation<I, O>>;
}

export interface CheckResult<I, O> {
  outcome: CheckOutcome;
  partitions: number;
  /** Search steps over all partitions (for benchmarks and budget tuning). */
  steps: number;
  /** Partitions the budget ran out on (outcome 'unknown' when any, unless one is illegal). */
  undecided: number;
  /** Set when outcome is 'illegal': the first part found without a linearization. */
  illegal?: IllegalPartition<I, O>;
}

const DEFAULT_MAX_STEPS = 5_000_000;

/**
 * Decides whether a concurrent history is linearizable with respect to `model`: whether some
 * total order of its operations, consistent with real time (an operation that returned before
 * another was called comes first), is legal for the sequential model. As Porcupine does: the
 * history is cut into the model's independent partitions (one per key for a key-value store),
 * and each is searched on its own (see searchPartition). Operations without a return may be
 * placed anywhere after their call, or left out.
 */
export function checkLinearizability<S, I, O>(
  model: Model<S, I, O>,
  history: ReadonlyArray<Operation<I, O>>,
  options: CheckOptions = {},
): CheckResult<I, O> {
  for (const op of history) validate(op);
  const parts = model.partition ? model.partition(history) : [[...history]];
  const perPartition = options.maxStepsPerPartition ?? DEFAULT_MAX_STEPS;
  let left = options.maxSteps ?? Infinity;
  let steps = 0;
  let undecided = 0;
  for (const part of parts) {
    const budget = Math.min(perPartition, left);
    const verdict = budget > 0 ? searchPartition(model, part, budget) : undefined;
    if (verdict) {
      // A partition over budget reports one step past it: count what was allowed.
      const spent = Math.min(verdict.steps, budget);
      steps += spent;
      left -= spent;
    }
    if (verdict?.outcome === 'illegal') {
      return {
        outcome: 'illegal',
        partitions: parts.length,
        steps,
        undecided,
        illegal: { operations: verdict.operations, longestLinearization: verdict.longest ?? [] },
      };
    }
    if (verdict?.outcome !== 'ok') undecided += 1;
  }
  return { outcome: undecided > 0 ? 'unknown' : 'ok', partitions: parts.length, steps, undecided };
}

/** A failure report a person can read: the stuck prefix, then the operations left over. */
export function describeIllegal<S, I, O>(model: Model<S, I, O>, result: CheckResult<I, O>): string {
  if (!result.illegal) return `history is ${result.outcome}`;
  const describe = model.describe ?? defaultDescribe;
  const line = (op: Operation<I, O>) =>
    `  [${op.call}, ${op.return ?? '?'}] client ${op.client}: ${describe(op)}`;
  const placed = new Set(result.illegal.longestLinearization);
  const rest = result.illegal.operations.filter((op) => !placed.has(op));
  return [
    `not linearizable: no legal order for these ${result.illegal.operations.length} operations.`,
    'longest legal order found:',
    ...result.illegal.longestLinearization.map(line),
    'that no order could place after it:',
    ...rest.map(line),
  ].join('\n');
}

function validate<I, O>(op: Operation<I, O>): void {
  if (!Number.isFinite(op.call))
    throw new RangeError(
      `operation of client ${op.client}: call time must be finite, got ${op.call}`,
    );
  if (op.return !== undefined && !(op.return >= op.call)) {
    throw new RangeError(
      `operation of client ${op.client}: return time ${op.return} is before its call time ${op.call}`,
    );
  }
}

function defaultDescribe<I, O>(op: Operation<I, O>): string {
  return `${JSON.stringify(op.input)} -> ${op.output === undefined ? 'unknown' : JSON.stringify(op.output)}`;
}
