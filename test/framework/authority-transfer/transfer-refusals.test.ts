import test from 'ava';
import * as errors from '@baton/authority-transfer/internal/transfer-errors.js';
import { answeredCodes, problemType, refusalAnswer } from '@baton/authority-transfer/internal/transfer-refusals.js';
import { transferProblemMapper } from '@baton/authority-transfer/internal/transfer-problems.js';

// One table answers every transfer error: its status, its problem type and its metric label.

type AnyError = new (...args: unknown[]) => errors.TransferError;

/** Every error class of the variant, raised with placeholder arguments. */
function everyError(): errors.TransferError[] {
  const raised: errors.TransferError[] = [];
  for (const value of Object.values(errors)) {
    if (typeof value !== 'function' || value === errors.TransferError) continue;
    if (!(value.prototype instanceof errors.TransferError)) continue;
    raised.push(new (value as unknown as AnyError)('k1', 'cause', 'detail', 'four', 'five', 'six'));
  }
  return raised;
}

test('every transfer error has a row: its status and problem type are the table\'s', (t) => {
  const raised = everyError();
  t.true(raised.length >= 20, `${raised.length} error classes`);
  for (const error of raised) {
    t.is(error.status, refusalAnswer(error.code).status, error.code);
    const problem = transferProblemMapper(error)!;
    t.is(problem.status, error.status, error.code);
  }
  t.throws(() => refusalAnswer('no_such_code'), { message: /add it to transfer-refusals.ts/ });
  t.throws(() => refusalAnswer('constructor'), undefined, 'an inherited name is not a row');
});

test('the seed\'s answers, and the metric label each run outcome is counted under', (t) => {
  const rows: [string, number, string][] = [
    ['transfer_cancelled', 409, 'cancelled'],
    ['transfer_released', 409, 'cancelled'],
    ['catch_up_timeout', 504, 'timed_out'],
    ['transfer_outcome_unknown', 503, 'outcome_unknown'],
    ['move_refused.source_not_home', 409, 'refused'],
    ['commit_refused.queue_saturated', 503, 'refused'],
    ['commit_refused.key_reused', 422, 'refused'],
    ['idempotency_key_mismatch', 422, 'refused'],
    ['audit_projection_failed', 503, 'committed_unprojected'],
    ['transfer_in_progress', 409, 'failed'],
    ['transfer_not_found', 404, 'failed'],
    ['transfer_committed', 409, 'failed'],
    ['ownership_unavailable', 503, 'failed'],
  ];
  for (const [code, status, metric] of rows) t.deepEqual(refusalAnswer(code), { status, metric }, code);
  t.is(problemType('move_refused.source_not_home'), 'move-refused-source-not-home');
  t.true(answeredCodes().includes('catch_up_timeout'));
});
