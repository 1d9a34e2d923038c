import { Bitset, Zobrist, isSubset, sameWords } from './bitset.js';
import type { Operation } from './history.js';
import type { Model } from './model.js';

export interface CheckOptions {
  /**
   * Search steps allowed per partition before giving up with outcome 'unknown' (default 5
   * million, some seconds). A test must treat 'unknown' as a failure to decide, never as a pass.
   */
  maxStepsPerPartition?: number;
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
  /** Set when outcome is 'illegal': the first part found without a linearization. */
  illegal?: IllegalPartition<I, O>;
}

interface Entry {
  kind: 'call' | 'return';
  op: number;
  time: number;
  prev: Entry | null;
  next: Entry | null;
  /** For a call: its return entry, if the operation returned. */
  match: Entry | null;
}

const DEFAULT_MAX_STEPS = 5_000_000;

/**
 * Decides whether a concurrent history is linearizable with respect to `model`: whether some
 * total order of its operations, consistent with real time (an operation that returned before
 * another was called comes first), is legal for the sequential model. Wing & Gong's search with
 * Lowe's memoisation on (set of linearized operations, state), as in Porcupine. Operations
 * without a return may be placed anywhere after their call, or left out.
 */
export function checkLinearizability<S, I, O>(
  model: Model<S, I, O>,
  history: ReadonlyArray<Operation<I, O>>,
  options: CheckOptions = {},
): CheckResult<I, O> {
  for (const op of history) validate(op);
  const parts = model.partition ? model.partition(history) : [[...history]];
  const budget = options.maxStepsPerPartition ?? DEFAULT_MAX_STEPS;
  let steps = 0;
  let undecided = false;
  for (const part of parts) {
    const result = checkPart(model, part, budget);
    steps += result.steps;
    if (result.outcome === 'illegal') {
      return { outcome: 'illegal', partitions: parts.length, steps, illegal: result.illegal };
    }
    if (result.outcome === 'unknown') undecided = true;
  }
  return { outcome: undecided ? 'unknown' : 'ok', partitions: parts.length, steps };
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

function checkPart<S, I, O>(
  model: Model<S, I, O>,
  allOps: ReadonlyArray<Operation<I, O>>,
  budget: number,
): { outcome: CheckOutcome; steps: number; illegal?: IllegalPartition<I, O> } {
  const stateKey = model.stateKey ?? ((s: S) => JSON.stringify(s));
  // A read whose answer is unknown constrains nothing: leaving it out is exact, and cheap.
  const ops = allOps.filter((op) => !(op.output === undefined && model.isReadOnly?.(op.input)));
  const head = buildEntries(ops);
  const zobrist = new Zobrist(ops.length);
  const known = new Bitset(ops.length, zobrist);
  const unknown = new Bitset(ops.length, zobrist);
  const memo = new Map<string, Array<{ known: Uint32Array; unknowns: Uint32Array[] }>>();
  let remainingKnown = ops.filter((op) => op.return !== undefined).length;

  /**
   * Records a configuration; false if it, or one that dominates it, was explored already. With
   * the same returned operations linearized and the same state, a configuration that applied
   * fewer unknown-outcome operations can do all the other can (those operations may simply
   * never take effect), so its failure implies the other's.
   */
  const firstVisit = (state: S): boolean => {
    const key = known.hash() + '|' + stateKey(state);
    let bucket = memo.get(key);
    if (!bucket) memo.set(key, (bucket = []));
    const entry = bucket.find((e) => sameWords(e.known, known.words));
    if (!entry) {
      bucket.push({ known: known.copy(), unknowns: [unknown.copy()] });
      return true;
    }
    if (entry.unknowns.some((applied) => isSubset(applied, unknown.words))) return false;
    entry.unknowns.push(unknown.copy());
    return true;
  };

  const stack: Array<{ candidates: Entry[]; next: number; state: S; via: Entry | null }> = [];
  stack.push({ candidates: candidates(head), next: 0, state: model.init(), via: null });
  let best: Entry[] = [];
  let steps = 0;

  while (remainingKnown > 0) {
    const frame = stack[stack.length - 1];
    if (frame.next >= frame.candidates.length) {
      // Nothing more to try here: undo the choice that led here, or give up at the root.
      const via = frame.via;
      if (via === null) {
        return {
          outcome: 'illegal',
          steps,
          illegal: { operations: [...ops], longestLinearization: best.map((e) => ops[e.op]) },
        };
      }
      // The deepest legal prefix is only needed for the report, so it is copied when the search
      // backs out of a new maximum depth, not on every step forward.
      if (stack.length - 1 > best.length) best = stack.slice(1).map((f) => f.via!);
      stack.pop();
      unlift(via);
      if (via.match) {
        known.clear(via.op);
        remainingKnown += 1;
      } else unknown.clear(via.op);
      continue;
    }
    const entry = frame.candidates[frame.next++];
    if (++steps > budget) return { outcome: 'unknown', steps };
    const op = ops[entry.op];
    const next = model.step(frame.state, op.input, op.output);
    if (!next.ok) continue;
    const bits = entry.match ? known : unknown;
    bits.set(entry.op);
    if (!firstVisit(next.state)) {
      bits.clear(entry.op);
      continue;
    }
    lift(entry);
    if (entry.match) remainingKnown -= 1;
    stack.push({ candidates: candidates(head), next: 0, state: next.state, via: entry });
  }
  return { outcome: 'ok', steps };
}

/**
 * The operations that may come next: every call before the first pending return. Returned
 * operations are tried before unknown-outcome ones, so the configurations that leave an
 * unknown operation unapplied (which dominate those that apply it) are explored first.
 */
function candidates(head: Entry): Entry[] {
  const returned: Entry[] = [];
  const unknown: Entry[] = [];
  for (let e = head.next; e !== null && e.kind === 'call'; e = e.next)
    (e.match ? returned : unknown).push(e);
  return returned.concat(unknown);
}

/** The call and return events in time order behind a sentinel; at equal times calls go first. */
function buildEntries<I, O>(ops: ReadonlyArray<Operation<I, O>>): Entry {
  const entries: Entry[] = [];
  ops.forEach((op, i) => {
    const call: Entry = { kind: 'call', op: i, time: op.call, prev: null, next: null, match: null };
    entries.push(call);
    if (op.return !== undefined) {
      call.match = { kind: 'return', op: i, time: op.return, prev: null, next: null, match: null };
      entries.push(call.match);
    }
  });
  // Calls before returns at one instant: operations that touch are treated as overlapping,
  // which can only accept more histories, never reject a correct one.
  entries.sort(
    (a, b) => a.time - b.time || (a.kind === b.kind ? a.op - b.op : a.kind === 'call' ? -1 : 1),
  );
  const head: Entry = {
    kind: 'call',
    op: -1,
    time: -Infinity,
    prev: null,
    next: null,
    match: null,
  };
  let last = head;
  for (const e of entries) {
    last.next = e;
    e.prev = last;
    last = e;
  }
  return head;
}

function unlink(e: Entry): void {
  e.prev!.next = e.next;
  if (e.next) e.next.prev = e.prev;
}

function relink(e: Entry): void {
  e.prev!.next = e;
  if (e.next) e.next.prev = e;
}

function lift(call: Entry): void {
  unlink(call);
  if (call.match) unlink(call.match);
}

function unlift(call: Entry): void {
  if (call.match) relink(call.match);
  relink(call);
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
