import { BatonError } from '@baton/contracts';
import { refusalAnswer } from './transfer-refusals.js';

/**
 * The typed errors of the authority-transfer variant. Each carries the HTTP status its code is
 * answered with, taken from the one table of answers (transfer-refusals.ts) when it is raised.
 */
export abstract class TransferError extends BatonError {
  readonly status: number;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.status = refusalAnswer(code).status;
  }
}

/** The transfer was cancelled before its claim; its run answers 409 and moves nothing. */
export class TransferCancelledError extends TransferError {
  constructor(readonly id: string, readonly authority: string) {
    super('transfer_cancelled', `transfer ${id} of ${authority} was cancelled before it committed; nothing moved`);
  }
}

/** The target did not reach the barrier within the budget; no audit was written. */
export class CatchUpTimeoutError extends TransferError {
  constructor(
    readonly id: string,
    readonly authority: string,
    /** Undefined when no barrier was read (the source never told its serial) or this member only waited on the transfer. */
    readonly barrier: number | undefined,
    readonly frontier: number | undefined,
    budgetMs: number,
  ) {
    super(
      'catch_up_timeout',
      (barrier === undefined
        ? `transfer ${id} of ${authority} did not commit within its budget of ${budgetMs} ms; `
        : `target did not apply through barrier ${barrier} within ${budgetMs} ms (last frontier: ${frontier ?? 'none'}); `) +
        `nothing moved and no audit was written: let the target catch up and reissue with Idempotency-Key ${id}`,
    );
  }
}

export class TransferInProgressError extends TransferError {
  constructor(readonly authority: string, readonly runningId: string) {
    super(
      'transfer_in_progress',
      `a transfer of ${authority} is already running (Idempotency-Key ${runningId}): wait for it or cancel it first`,
    );
  }
}

/** The Idempotency-Key already names a transfer with a different request. */
export class IdempotencyKeyMismatchError extends TransferError {
  constructor(readonly id: string, detail: string) {
    super(
      'idempotency_key_mismatch',
      `Idempotency-Key ${id} already names a different transfer (${detail}): use a new key for a new request`,
    );
  }
}

/** The move committed but this member's audit store did not take the sealed record. */
export class AuditProjectionError extends TransferError {
  constructor(readonly id: string, cause: unknown) {
    super(
      'audit_projection_failed',
      `transfer ${id} committed but its audit record could not be stored: ${(cause as Error)?.message ?? cause}; ` +
        `the record stays pending: retry with Idempotency-Key ${id}`,
      { cause },
    );
  }
}

/** The commit may or may not have happened (leadership loss, timeout): the key resolves it. */
export class TransferOutcomeUnknownError extends TransferError {
  constructor(readonly id: string, cause: unknown) {
    super(
      'transfer_outcome_unknown',
      `transfer ${id} may have committed: ${(cause as Error)?.message ?? cause}; retry with Idempotency-Key ${id} to learn the outcome`,
      { cause },
    );
  }
}

/** The consensus refused the command before appending it; the plan is Ready again. */
export class CommitRefusedError extends TransferError {
  constructor(readonly id: string, readonly reason: string, cause: unknown) {
    super(
      `commit_refused.${reason}`,
      `transfer ${id} was not submitted (${reason}): ${(cause as Error)?.message ?? cause}; ` +
        `the transfer is Ready again: retry with Idempotency-Key ${id} or cancel it`,
      { cause },
    );
  }
}

/** The ownership state refused the move (the source is no longer the authority's home...). */
export class MoveRefusedError extends TransferError {
  constructor(readonly authority: string, readonly reason: string, detail: string) {
    super(`move_refused.${reason}`, `cannot move ${authority}: ${detail}`);
  }
}

/** Mode dc has no ownership consensus: transfer requests are not served. */
export class OwnershipUnavailableError extends TransferError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('ownership_unavailable', detail, options);
  }
}

/** The request is malformed; the message says which field and why. */
export class InvalidTransferRequestError extends TransferError {
  constructor(detail: string) {
    super('invalid_request', detail);
  }
}

export class TransferNotFoundError extends TransferError {
  constructor(readonly authority: string) {
    super('transfer_not_found', `no transfer of ${authority} is registered or committed`);
  }
}

/** A committed transfer cannot be cancelled: the move stands. */
export class TransferCommittedError extends TransferError {
  constructor(readonly authority: string, readonly id: string | undefined) {
    super(
      'transfer_committed',
      `the transfer of ${authority}${id ? ` (${id})` : ''} already committed; the move stands and cannot be cancelled`,
    );
  }
}

/** A claimed transfer is being submitted to consensus: cancel is refused from the claim onward. */
export class TransferCommittingError extends TransferError {
  constructor(readonly authority: string, readonly id: string) {
    super(
      'transfer_committing',
      `the transfer of ${authority} (${id}) is committing and can no longer be cancelled; its outcome follows shortly`,
    );
  }
}

/** A write was offered under an epoch that is no longer the authority's current one. */
export class StaleEpochError extends TransferError {
  constructor(readonly authority: string, readonly offered: number, readonly current: number | undefined) {
    super(
      'stale_epoch',
      current !== undefined && offered > current
        ? `write to ${authority} under epoch ${offered} names an epoch not minted yet (current epoch ${current}): it is rejected and never finalised`
        : `write to ${authority} under epoch ${offered} is stale (current epoch ${current ?? 'none'}): it is rejected and never finalised`,
    );
  }
}

/** A write arrived at a datacenter that is not the authority's home. */
export class NotHomeError extends TransferError {
  constructor(
    readonly authority: string,
    readonly datacenter: string,
    readonly home: string | undefined,
    /** The public addresses of the home's members, as the roster lists them: where to send the write. */
    readonly homeUrls: readonly string[] = [],
  ) {
    super(
      'not_home',
      home
        ? `${authority} lives in ${home}, not ${datacenter}: send the write to its home`
        : `${authority} has no home yet: establish it with a transfer_authority command`,
    );
  }
}

/** The failover path moves only an authority whose source the tracker calls Dead. */
export class SourceNotDeadError extends TransferError {
  constructor(readonly source: string, readonly state: string) {
    super(
      'source_not_dead',
      `source ${source} is ${state}, not Dead: a failover moves only a dead home; use a planned transfer (POST /availability/v1/transfers)`,
    );
  }
}

/** The change feed cannot take writes (its storage failed): the node answers 503 until restarted. */
export class FeedUnavailableError extends TransferError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('feed_unavailable', `the change feed cannot record writes: ${detail}; restart the node once its data dir is writable`, options);
  }
}

/**
 * No member of the source datacenter told its acknowledged serial within a probe timeout: there
 * is no barrier, so nothing was registered. Answered at once (503, retry) rather than waiting
 * unregistered, where no other member could see or cancel the request.
 */
export class SourceUnreadableError extends TransferError {
  constructor(readonly id: string, readonly authority: string, source: string, member: string | undefined, detail: string) {
    super(
      'source_unreadable',
      `the barrier of transfer ${id} cannot be read: ${member === undefined ? `the source datacenter ${source}` : `${member} of the source datacenter ${source}`} did not tell its acknowledged serial (${detail}); this request registered nothing: retry with Idempotency-Key ${id} once ${source} answers (an authority whose home is lost moves by failover)`,
    );
  }
}

/**
 * A peer's clock is further from the driving member's than `transfers.maxClockSkewMs`: the
 * deadline this member would stamp on the registration could be judged passed by that peer
 * early, so it drives no new transfer until the clocks agree (nothing was registered), nor
 * starts a scheduled one (released unstarted).
 */
export class ClockSkewError extends TransferError {
  constructor(readonly id: string, readonly peer: string, readonly offsetMs: number, readonly boundMs: number, when: 'before registering' | 'at its start') {
    super(
      'clock_skew',
      `transfer ${id} ${when === 'before registering' ? 'was not registered' : 'was released at its scheduled start, unstarted'}: the clock of ${peer} is ${Math.round(Math.abs(offsetMs))} ms ${offsetMs > 0 ? 'ahead of' : 'behind'} this member's, past transfers.maxClockSkewMs (${boundMs} ms); synchronise the clocks (NTP), then retry with Idempotency-Key ${id}, or send the request to a member whose clock agrees`,
    );
  }
}

/** A planned transfer froze the authority: its source acknowledges no write until it commits or thaws. */
export class AuthorityFrozenError extends TransferError {
  constructor(readonly authority: string, readonly transferId: string, readonly target: string) {
    super(
      'authority_frozen',
      `${authority} is frozen while transfer ${transferId} to ${target} catches up: the write was not accepted; retry after the Retry-After delay (at the new home if it moved)`,
    );
  }
}

/** The registered transfer ended without a move (cancelled, timed out, expired or superseded). */
export class TransferReleasedError extends TransferError {
  constructor(readonly id: string, readonly authority: string, why: string) {
    super('transfer_released', `transfer ${id} of ${authority} ended without a move (${why}); nothing moved: reissue it to try again`);
  }
}

/**
 * This member is the authority's new home, but its replica of a source member's feed is short of
 * the final serial the move recorded (it lost or reset its replica after the barrier was read):
 * it acknowledges no write until it caught up, which it does from the source's feed meanwhile.
 */
export class HomeCatchingUpError extends TransferError {
  constructor(
    readonly authority: string,
    readonly epoch: number,
    readonly source: string,
    /** The serial of the source member's feed the home must hold. */
    readonly barrier: number,
    /** What it holds of it now. */
    readonly frontier: number,
  ) {
    super(
      'home_catching_up',
      `this member became the home of ${authority} at epoch ${epoch} but holds ${source}'s feed only through ${frontier}, short of the final serial ${barrier} the move recorded: the write was not accepted; retry after the Retry-After delay`,
    );
  }
}
