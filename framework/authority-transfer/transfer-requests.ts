import type { AuditRecord } from '@baton/contracts';
import type { OwnershipCommand } from './ownership.js';
import { IdempotencyKeyMismatchError, InvalidTransferRequestError, TransferError } from './transfer-errors.js';
import type { TransferRequest } from './transfer-plan.js';
import { refusalAnswer } from './transfer-refusals.js';

// What a transfer request is checked against before any rule of the lifecycle: its fields, and
// whether two requests (or a request and a sealed record) name the same move.

/** The authority an applied command names, if it names one. */
export function authorityOf(command: OwnershipCommand): string | undefined {
  return 'authority' in command && typeof command.authority === 'string' ? command.authority : undefined;
}

export function validateTransferRequest(request: TransferRequest): void {
  for (const field of ['id', 'authority', 'source', 'target', 'actor'] as const) {
    if (typeof request[field] !== 'string' || request[field].length === 0) {
      throw new InvalidTransferRequestError(`${field} must be a non-empty string`);
    }
  }
  if (typeof request.reason !== 'string') throw new InvalidTransferRequestError('reason must be a string');
  if (request.source === request.target) {
    throw new InvalidTransferRequestError(`source and target are both ${request.source}: a transfer moves between two datacenters`);
  }
  // A planned record is stored under its key, a raw move's under `<commit_index>-0`: a key spelt
  // so could name both, and the audit stores keep one record per id.
  if (RAW_RECORD_ID.test(request.id)) {
    throw new InvalidTransferRequestError(
      `Idempotency-Key ${request.id} is spelt as a raw move's audit record id (<commit_index>-<seq>): choose another key, or omit it to have one assigned`,
    );
  }
}

/** The id a raw move's record gets (authority-trail.ts), which no planned transfer's key may take. */
const RAW_RECORD_ID = /^\d+-\d+$/;

/**
 * How far ahead a transfer may be scheduled: past this, a not_before or not_after is a mistake.
 * A week: a deadline that far keeps every member's timers (24.8 days at most) well in range,
 * and an undriven registration (its driver restarted) holds the authority no longer than that.
 */
export const MAX_SCHEDULE_AHEAD_MS = 7 * 24 * 3600_000;

/** A schedule's times (the driver's clock, `now`): in order, ahead, and within the horizon. */
export function validateSchedule(request: TransferRequest, now: number): void {
  const { notBefore, notAfter } = request;
  for (const [field, at] of [['not_before', notBefore], ['not_after', notAfter]] as const) {
    if (at === undefined) continue;
    if (!Number.isSafeInteger(at)) throw new InvalidTransferRequestError(`${field} must be a time`);
    if (at - now > MAX_SCHEDULE_AHEAD_MS) throw new InvalidTransferRequestError(`${field} is more than 7 days ahead`);
  }
  if (notAfter !== undefined && notAfter <= now) throw new InvalidTransferRequestError('not_after has passed: a transfer scheduled to end by then could not start');
  if (notBefore !== undefined && notAfter !== undefined && notAfter <= notBefore) throw new InvalidTransferRequestError('not_after must be later than not_before');
}

export function assertSameTransfer(request: TransferRequest, sealed: AuditRecord): void {
  if (!sameMove(request, sealed)) throw new IdempotencyKeyMismatchError(request.id, `it committed ${describeMove(sealed)}`);
}

export type Move = { authority: string; source: string; target: string; reason: string };

/** The same move: what one key names (the actor and barrier are not the caller's to choose). */
export function sameMove(a: Move, b: Move): boolean {
  return a.authority === b.authority && a.source === b.source && a.target === b.target && a.reason === b.reason;
}

export function describeMove(r: { authority: string; source: string; target: string; reason: string }): string {
  return `${r.authority} from ${r.source} to ${r.target} (reason ${JSON.stringify(r.reason)})`;
}

/** Why a key called off is refused for another move: what it was, and what ended it. */
export function abandonedMove(a: { authority: string; source: string; target: string; reason: string; why?: string }): string {
  return `it was ${describeMove(a)}, ended without a move${a.why ? ` (${a.why})` : ''}`;
}

/** The metrics label of a run that ended in `error` (transfer-refusals.ts). */
export function outcomeOf(error: unknown): string {
  return error instanceof TransferError ? refusalAnswer(error.code).metric : 'failed';
}
