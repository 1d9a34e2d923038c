import type { Ownership } from './ownership.js';
import { TransferError } from './transfer-errors.js';

/**
 * An operator's "move it only if it is still where I saw it": `If-Match: "<epoch>"` (or
 * `expected_epoch`) on a planned transfer and on the raw transfer_authority command, the epoch
 * being the ETag of GET /availability/v1/authorities/{authority}. The source the request names
 * is the expected home; the epoch also catches a move away and back.
 *
 * The check is made by the ownership state machine where the move is decided (the planned
 * transfer's registration, the raw command's apply), so of two operators acting on the same
 * reading the log lets one through and refuses the other, whatever their members' views said.
 */

/** The state machine's refusal, when `expectedEpoch` is given and is not the authority's epoch. */
export function epochRefusal(
  current: Ownership | undefined,
  expectedEpoch: unknown,
): { ok: false; reason: 'precondition_failed'; home?: string; epoch?: number } | undefined {
  if (expectedEpoch === undefined || current?.epoch === expectedEpoch) return undefined;
  // An authority with no home has no epoch a caller could have read: its expectation fails too.
  return current ? { ok: false, reason: 'precondition_failed', home: current.home, epoch: current.epoch } : { ok: false, reason: 'precondition_failed' };
}

/** 412: the authority is no longer at the epoch (or home) the request expected; nothing moved. */
export class EpochPreconditionFailedError extends TransferError {
  /** The cross-variant name of the current home, as a stream's 412 names its owner. */
  readonly owner: string | null;
  constructor(
    readonly authority: string,
    readonly expected: number,
    readonly home: string | undefined,
    readonly epoch: number | undefined,
  ) {
    super(
      'precondition_failed',
      home === undefined
        ? `${authority} has no home, so it is not at epoch ${expected} as expected: nothing moved`
        : `${authority} lives in ${home} at epoch ${epoch}, not at epoch ${expected} as expected: nothing moved; read it again before moving it`,
    );
    this.owner = home ?? null;
  }
}
