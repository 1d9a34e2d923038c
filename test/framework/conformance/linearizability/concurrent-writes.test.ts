import test from 'ava';
import { checkLinearizability } from '@baton/conformance/internal/linearizability/checker.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import { concurrentWritesHistory, withFinalRead, type Op } from './concurrent-writes-history.js';

// A burst of 38 concurrent writes has 2^38 subsets, each a distinct configuration of the
// search: these histories are decided only if it never has to visit most of them. The budget is
// generous; the bound on steps is what each answer must stay under (steps, unlike time, are the
// same on every machine).
const BUDGET = { maxStepsPerPartition: 5_000_000 };
const STEP_BOUND = 20_000;
/**
 * A stale read costs more: it is refused only once the overwritten write is placed, and the
 * search first tries the orders of the runs of writes between the lost ones that took effect
 * (exponential in their number, about 6 here, not in the 38 writes).
 */
const STALE_STEP_BOUND = 250_000;
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
const WRITES = 38;
const LOST = 12;

const check = (history: Op[]) => checkLinearizability(kvRegisterModel, history, BUDGET);

test('38 concurrent writes, some lost, then a read of the final value: linearizable, in few steps', (t) => {
  for (const seed of SEEDS) {
    const { history } = concurrentWritesHistory({ writes: WRITES, lost: LOST, seed });
    t.is(history.filter((op) => op.return === undefined).length, LOST);
    const result = check(history);
    t.is(result.outcome, 'ok', `seed ${seed}`);
    t.true(result.steps < STEP_BOUND, `seed ${seed}: ${result.steps} steps`);
  }
});

test('those histories are linearizable only because lost writes took effect', (t) => {
  // Some acknowledged write reports replacing a lost write's value: without the lost writes, no
  // order explains it. So the search above did have to place unknown-outcome writes.
  for (const seed of SEEDS) {
    const { history } = concurrentWritesHistory({ writes: WRITES, lost: LOST, seed });
    const answered = history.filter((op) => op.return !== undefined);
    t.is(check(answered).outcome, 'illegal', `seed ${seed}`);
  }
});

test('the same histories with the read returning a value never written are not linearizable', (t) => {
  for (const seed of SEEDS) {
    const { history } = concurrentWritesHistory({ writes: WRITES, lost: LOST, seed });
    const result = check(withFinalRead(history, 'never-written'));
    t.is(result.outcome, 'illegal', `seed ${seed}`);
    t.true(result.steps < STEP_BOUND, `seed ${seed}: ${result.steps} steps`);
  }
});

test('the same histories with the read returning an overwritten value are not linearizable', (t) => {
  for (const seed of SEEDS) {
    const { history, overwritten } = concurrentWritesHistory({ writes: WRITES, lost: LOST, seed });
    const result = check(withFinalRead(history, overwritten));
    t.is(result.outcome, 'illegal', `seed ${seed}`);
    t.true(result.steps < STALE_STEP_BOUND, `seed ${seed}: ${result.steps} steps`);
  }
});

test('writes acknowledged without the value they replaced: any of them may be read last, no other value', (t) => {
  // Nothing orders plain concurrent writes, so whichever the read returns can be placed last;
  // a search that tries writes in call order finds the first write last only after every other
  // order, unless it sees early that the read can no longer be satisfied.
  const { history } = concurrentWritesHistory({ writes: WRITES, lost: LOST, seed: 1, bare: true });
  const written = history.filter((op) => op.input.op === 'put');
  const lost = written.find((op) => op.return === undefined)!;
  for (const write of [written[0], written[WRITES >> 1], written[WRITES - 1], lost]) {
    const value = write.input.op === 'put' ? write.input.value : '';
    const result = check(withFinalRead(history, value));
    t.is(result.outcome, 'ok', value);
    t.true(result.steps < STEP_BOUND, `${value}: ${result.steps} steps`);
  }
  const never = check(withFinalRead(history, 'never-written'));
  t.is(never.outcome, 'illegal');
  t.true(never.steps < STEP_BOUND, `never written: ${never.steps} steps`);
});
