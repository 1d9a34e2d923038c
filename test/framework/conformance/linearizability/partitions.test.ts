import test from 'ava';
import {
  checkLinearizability,
  describeIllegal,
} from '@baton/conformance/internal/linearizability/checker.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import { concurrentWritesHistory, withFinalRead, type Op } from './concurrent-writes-history.js';

// Linearizability is local: a history is linearizable iff each object's part is. The register
// model cuts a history by key, and each key is searched alone, so a burst on one key never
// multiplies with the operations on another.

const put = (key: string, value: string, call: number, previous: string | null): Op => ({
  client: `${key}-writer`,
  input: { op: 'put', key, value },
  call,
  return: call + 1,
  output: { op: 'put', previous },
});
const get = (key: string, call: number, value: string | null): Op => ({
  client: `${key}-reader`,
  input: { op: 'get', key },
  call,
  return: call + 1,
  output: { op: 'get', value },
});

/** Each key on its own is a plain sequential register; read as one register, it is not. */
const twoKeys: Op[] = [
  put('x', 'a', 0, null),
  get('y', 2, null),
  get('x', 4, 'a'),
  put('y', 'b', 6, null),
  get('x', 8, 'a'),
  get('y', 8, 'b'),
];

test('keys that are each linearizable make a linearizable history, however their operations interleave', (t) => {
  const result = checkLinearizability(kvRegisterModel, twoKeys);
  t.is(result.outcome, 'ok');
  t.is(result.partitions, 2);
  // The same operations as one register: y's null after x's write, and y's put answering null
  // after it, would be errors. Only the cut by key says they are not.
  const oneRegister = { ...kvRegisterModel, partition: undefined };
  t.is(checkLinearizability(oneRegister, twoKeys).outcome, 'illegal');
});

test('one key that is not linearizable makes the history illegal, and the report keeps to that key', (t) => {
  const { history } = concurrentWritesHistory({ writes: 38, lost: 12, seed: 1 });
  const stale = [...twoKeys, put('y', 'c', 10, 'b'), get('y', 12, 'b')];
  const result = checkLinearizability(kvRegisterModel, [...history, ...stale]);
  t.is(result.outcome, 'illegal');
  t.is(result.partitions, 3);
  t.true(result.illegal!.operations.every((op) => op.input.key === 'y'));
  t.regex(describeIllegal(kvRegisterModel, result), /get\(y\) -> {"op":"get","value":"b"}/);
});

test('a key the budget runs out on leaves the history undecided, never passed', (t) => {
  const { history } = concurrentWritesHistory({ writes: 38, lost: 12, seed: 1 });
  const result = checkLinearizability(kvRegisterModel, [...history, ...twoKeys], {
    maxStepsPerPartition: 100,
  });
  t.is(result.outcome, 'unknown');
  t.is(result.undecided, 1);
  // The same with a budget over the whole history, spent before the last keys are reached.
  const total = checkLinearizability(kvRegisterModel, [...history, ...twoKeys], { maxSteps: 100 });
  t.is(total.outcome, 'unknown');
  t.is(total.undecided, 3);
  t.true(total.steps <= 100);
});

test('an illegal key is reported as such even when another key ran out of budget', (t) => {
  const { history, overwritten } = concurrentWritesHistory({ writes: 38, lost: 12, seed: 1 });
  const stale = [put('y', 'a', 0, null), put('y', 'b', 2, 'a'), get('y', 4, 'a')];
  const result = checkLinearizability(
    kvRegisterModel,
    [...withFinalRead(history, overwritten), ...stale],
    { maxStepsPerPartition: 100 },
  );
  t.is(result.outcome, 'illegal');
  t.is(result.undecided, 1);
  t.true(result.illegal!.operations.every((op) => op.input.key === 'y'));
});
