/**
 * How each way a request of this variant can end without its record is answered: the HTTP
 * status (seed 003 names most of them), the problem type, and the label the transfer metrics
 * count a run under. One table, so the error a rule raises, the problem+json a client reads and
 * the outcome an operator graphs cannot drift apart.
 *
 * Keyed by error code; a code with a cause after a dot (`move_refused.source_not_home`) is
 * answered by its own row when it has one, else by its family's (`move_refused`).
 */

/** The outcome label of `baton_transfers_total` for a run that ended this way. */
export type TransferOutcomeLabel = 'cancelled' | 'timed_out' | 'outcome_unknown' | 'refused' | 'committed_unprojected' | 'failed';

export interface RefusalAnswer {
  status: number;
  metric: TransferOutcomeLabel;
}

const TABLE = new Map<string, RefusalAnswer>(Object.entries({
  // A run called off, or whose registration left the replicated state without its commit.
  transfer_cancelled: { status: 409, metric: 'cancelled' },
  transfer_released: { status: 409, metric: 'cancelled' },
  // The target did not reach the barrier within the budget: retry once it caught up.
  catch_up_timeout: { status: 504, metric: 'timed_out' },
  // The commit may have been appended: the same key resolves it.
  transfer_outcome_unknown: { status: 503, metric: 'outcome_unknown' },
  // The ownership state or the consensus refused the move: nothing was changed.
  move_refused: { status: 409, metric: 'refused' },
  commit_refused: { status: 503, metric: 'refused' },
  'commit_refused.key_reused': { status: 422, metric: 'refused' },
  idempotency_key_mismatch: { status: 422, metric: 'refused' },
  // The authority is no longer at the epoch the operator's If-Match (or expected_epoch) named.
  precondition_failed: { status: 412, metric: 'refused' },
  // The move committed; this member's audit store did not take its record yet.
  audit_projection_failed: { status: 503, metric: 'committed_unprojected' },
  transfer_in_progress: { status: 409, metric: 'failed' },
  ownership_unavailable: { status: 503, metric: 'failed' },
  source_unreadable: { status: 503, metric: 'failed' },
  // A peer's clock is past the configured skew bound: nothing registered, retry once they agree.
  clock_skew: { status: 503, metric: 'failed' },
  invalid_request: { status: 400, metric: 'failed' },
  // Answers of a cancel.
  transfer_not_found: { status: 404, metric: 'failed' },
  transfer_committed: { status: 409, metric: 'failed' },
  transfer_committing: { status: 409, metric: 'failed' },
  // Answers of a write or a failover, which no transfer metric counts.
  stale_epoch: { status: 409, metric: 'failed' },
  not_home: { status: 421, metric: 'failed' },
  source_not_dead: { status: 409, metric: 'failed' },
  feed_unavailable: { status: 503, metric: 'failed' },
  authority_frozen: { status: 503, metric: 'failed' },
  home_catching_up: { status: 503, metric: 'failed' },
} satisfies Record<string, RefusalAnswer>));

/** The answer to an error of `code`; a code the table does not know is a defect, caught by its test. */
export function refusalAnswer(code: string): RefusalAnswer {
  const answer = TABLE.get(code) ?? TABLE.get(code.split('.')[0]);
  if (!answer) throw new Error(`no answer is set for the transfer error code ${code}: add it to transfer-refusals.ts`);
  return answer;
}

/** The problem type of an error of `code`: the code as a slug (`move_refused.source_not_home` -> `move-refused-source-not-home`). */
export function problemType(code: string): string {
  return code.replace(/[._]/g, '-');
}

/** Every code the table answers, for the test that holds each error class to it. */
export function answeredCodes(): string[] {
  return [...TABLE.keys()];
}
