import { type ProblemMapper, HttpProblem, retryAfter } from '@baton/http';
import { NotHomeError, TransferError } from './transfer-errors.js';
import { problemType } from './transfer-refusals.js';

/**
 * Answers the variant's typed errors with the status each one carries, as problem+json. The
 * problem type is the error code as a slug (both from transfer-refusals.ts); the transfer id and authority travel as extension
 * members so a client can retry under the right key without parsing the detail.
 */
export const transferProblemMapper: ProblemMapper = (error) => {
  if (!(error instanceof TransferError)) return undefined;
  const fields = error as unknown as Record<string, unknown>;
  const extra: Record<string, unknown> = { code: error.code };
  if (typeof fields.id === 'string') extra.transfer_id = fields.id;
  if (typeof fields.authority === 'string') extra.authority = fields.authority;
  // The transfer already running (409 transfer_in_progress): a client can wait on it or cancel it.
  if (typeof fields.runningId === 'string') extra.running_id = fields.runningId;
  if (typeof fields.barrier === 'number') extra.barrier = fields.barrier;
  if (fields.frontier !== undefined) extra.frontier = fields.frontier;
  // A write at the wrong datacenter (421) names the home and its members' public addresses.
  if (error instanceof NotHomeError) {
    extra.home = error.home ?? null;
    extra.home_urls = [...error.homeUrls];
  }
  // A failed precondition (412) names where the authority is now.
  if (fields.owner !== undefined) {
    extra.owner = fields.owner;
    extra.home = fields.home ?? null;
    extra.epoch = fields.epoch ?? null;
  }
  return new HttpProblem({
    status: error.status,
    type: problemType(error.code),
    detail: error.message,
    extra,
    headers: error.status === 503 ? retryAfter(1) : undefined,
    cause: error,
  });
};
