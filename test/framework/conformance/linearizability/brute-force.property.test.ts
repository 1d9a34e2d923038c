import { isDeepStrictEqual } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import type { KvCommand, KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import { checkLinearizability } from '@baton/conformance/internal/linearizability/checker.js';
import type { Operation } from '@baton/conformance/internal/linearizability/history.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import type { Model } from '@baton/conformance/internal/linearizability/model.js';
import { searchPartition } from '@baton/conformance/internal/linearizability/search.js';
import { bruteForceLinearizable, type Spec } from './brute-force.js';

// Small random histories, decided by the checker and by trying every order: both must agree.
// Each history is an execution of the specification (every operation takes effect at a point
// between its call and its return) with some answers lost, left unrecorded, or falsified, so
// that about as many are linearizable as are not.

type Outcome = 'ok' | 'bare' | 'lost' | 'lost-applied';

interface Planned<I> {
  input: I;
  call: number;
  effectAfter: number;
  returnAfter: number;
  outcome: Outcome;
  /** When set, the recorded answer is replaced by one made from this value. */
  falsify: string | null | undefined;
}

const outcomeArb = fc.constantFrom<Outcome>(
  'ok',
  'ok',
  'ok',
  'bare',
  'lost',
  'lost-applied',
  'lost-applied',
);
const valueArb = fc.constantFrom('a', 'b', 'c');

function plannedArb<I>(inputArb: fc.Arbitrary<I>): fc.Arbitrary<Array<Planned<I>>> {
  const one = fc.record({
    input: inputArb,
    call: fc.integer({ min: 0, max: 12 }),
    effectAfter: fc.integer({ min: 0, max: 4 }),
    returnAfter: fc.integer({ min: 0, max: 4 }),
    outcome: outcomeArb,
    falsify: fc.option(fc.constantFrom(null, 'a', 'b', 'c'), { freq: 3, nil: undefined }),
  });
  return fc.array(one, { minLength: 1, maxLength: 7 });
}

/** Runs the plan against `spec` in effect order and records what clients would have seen. */
function execute<S, I, O>(
  spec: Spec<S, I, O>,
  planned: Array<Planned<I>>,
  falsified: (output: O, value: string | null) => O,
): Array<Operation<I, O>> {
  const outputs = new Map<number, O>();
  let state = spec.init;
  const effective = planned
    .map((p, i) => ({ p, i, at: p.call + p.effectAfter }))
    .filter(({ p }) => p.outcome !== 'lost')
    .sort((a, b) => a.at - b.at || a.i - b.i);
  for (const { p, i } of effective) {
    const step = spec.apply(state, p.input);
    state = step.state;
    outputs.set(i, step.output);
  }
  return planned.map((p, i) => {
    const op: Operation<I, O> = { client: i, input: p.input, call: p.call };
    if (p.outcome === 'ok' || p.outcome === 'bare')
      op.return = p.call + p.effectAfter + p.returnAfter;
    if (p.outcome === 'ok') {
      const output = outputs.get(i)!;
      op.output = p.falsify === undefined ? output : falsified(output, p.falsify);
    }
    return op;
  });
}

/** The key-value store as a whole, every key in one map, independent of the checker's model. */
const kvSpec: Spec<ReadonlyMap<string, string>, KvCommand, KvResult> = {
  init: new Map(),
  apply(state, input) {
    const current = state.get(input.key) ?? null;
    const set = (value: string) => new Map(state).set(input.key, value);
    if (input.op === 'put')
      return { output: { op: 'put', previous: current }, state: set(input.value) };
    if (input.op === 'get') return { output: { op: 'get', value: current }, state };
    return current === input.expected
      ? { output: { op: 'cas', ok: true, value: input.value }, state: set(input.value) }
      : { output: { op: 'cas', ok: false, value: current }, state };
  },
  sameOutput: isDeepStrictEqual,
};

const falsifyKv = (output: KvResult, value: string | null): KvResult =>
  output.op === 'put'
    ? { op: 'put', previous: value }
    : output.op === 'get'
      ? { op: 'get', value }
      : { op: 'cas', ok: !output.ok, value };

const kvHistoryArb = fc.integer({ min: 1, max: 2 }).chain((keyCount) => {
  const key = fc.constantFrom(...['x', 'y'].slice(0, keyCount));
  const input: fc.Arbitrary<KvCommand> = fc.oneof(
    fc.record({ op: fc.constant('put' as const), key, value: valueArb }),
    fc.record({ op: fc.constant('get' as const), key }),
    fc.record({
      op: fc.constant('cas' as const),
      key,
      expected: fc.constantFrom(null, 'a', 'b'),
      value: valueArb,
    }),
  );
  return plannedArb(input).map((planned) => execute(kvSpec, planned, falsifyKv));
});

/**
 * The checker with its dead-end tables built before the first step. By default it builds them
 * only once a search has run long, which small histories rarely do: this way every history
 * goes through them too.
 */
function checkPruningFromTheStart<S, I, O>(
  model: Model<S, I, O>,
  history: Array<Operation<I, O>>,
): string {
  const parts = model.partition ? model.partition(history) : [history];
  const outcomes = parts.map((part) => searchPartition(model, part, 5_000_000, 0).outcome);
  return outcomes.includes('illegal') ? 'illegal' : outcomes.includes('unknown') ? 'unknown' : 'ok';
}

/** Agreement over many histories, and enough of each answer that agreement means something. */
function assertAgreement<S, T, I, O>(
  t: ExecutionContext,
  model: Model<S, I, O>,
  spec: Spec<T, I, O>,
  histories: fc.Arbitrary<Array<Operation<I, O>>>,
): void {
  const seen = { ok: 0, illegal: 0 };
  t.notThrows(() =>
    fc.assert(
      fc.property(histories, (history) => {
        const expected = bruteForceLinearizable(spec, history) ? 'ok' : 'illegal';
        seen[expected] += 1;
        return (
          checkLinearizability(model, history).outcome === expected &&
          checkPruningFromTheStart(model, history) === expected
        );
      }),
      { numRuns: 3_000 },
    ),
  );
  t.true(seen.ok > 300 && seen.illegal > 300, `too one-sided: ${JSON.stringify(seen)}`);
}

test('the checker agrees with trying every order, on small key-value histories of one or two keys', (t) => {
  assertAgreement(t, kvRegisterModel, kvSpec, kvHistoryArb);
});

// A model with no state key and no partition, whose states multiply with the operations (a
// queue remembers the order of what it holds): the checker compares its states with `equal`,
// and searches without the dead-end tables when the reachable states outgrow their bound.
type QueueInput = { op: 'enqueue'; value: string } | { op: 'dequeue' } | { op: 'peek' };
type QueueOutput = string | null;

const queueSpec: Spec<readonly string[], QueueInput, QueueOutput> = {
  init: [],
  apply(queue, input) {
    if (input.op === 'enqueue') return { output: 'done', state: [...queue, input.value] };
    const head = queue[0] ?? null;
    return { output: head, state: input.op === 'dequeue' ? queue.slice(1) : queue };
  },
  sameOutput: (a, b) => a === b,
};

const queueModel: Model<readonly string[], QueueInput, QueueOutput> = {
  init: () => [],
  step(queue, input, output) {
    const { output: expected, state } = queueSpec.apply(queue, input);
    return { ok: output === undefined || output === expected, state };
  },
  isReadOnly: (input) => input.op === 'peek',
  equal: (a, b) => a.length === b.length && a.every((value, i) => value === b[i]),
};

const queueHistoryArb = plannedArb<QueueInput>(
  fc.oneof(
    fc.record({ op: fc.constant('enqueue' as const), value: valueArb }),
    fc.constant({ op: 'dequeue' as const }),
    fc.constant({ op: 'peek' as const }),
  ),
).map((planned) =>
  execute(queueSpec, planned, (output, value) => (output === 'done' ? 'done' : value)),
);

test('the checker agrees with trying every order, on small queue histories compared by equal', (t) => {
  assertAgreement(t, queueModel, queueSpec, queueHistoryArb);
});
