import { HttpProblem, retryAfter, type ProblemMapper } from '@baton/http';
import type { RejectReason } from './commands.js';
import {
  AppendUnavailableError,
  CommandRejectedError,
  HandoffTimeoutError,
  NotOwnerError,
  StaleProducerSequenceError,
  ProducerHeldError,
  StreamFencedError,
  StreamNotFoundError,
} from './errors.js';
import { NodeStoppedError } from './stream-node.js';

/** HTTP status of each refusal of the metadata state machine. */
const REJECT_STATUS: Record<RejectReason, number> = {
  invalid_command: 400,
  unknown_stream: 404,
  unknown_node: 404,
  stream_exists: 409,
  no_free_slots: 409,
  node_draining: 409,
  already_transferring: 409,
  already_owner: 409,
  not_owner: 409,
  stale_epoch: 409,
  not_closed_at_epoch: 409,
  no_pending_transfer: 409,
  transfer_mismatch: 409,
  transfer_pending: 409,
  tail_mismatch: 409,
  node_not_dead: 409,
  node_dead: 409,
  precondition_failed: 412,
  placement_unsatisfiable: 409,
  maintenance_budget: 409,
  maintenance_active: 409,
  no_maintenance: 404,
  unknown_plan: 404,
  plan_stale: 412,
  plan_running: 409,
  plan_ended: 409,
};

/** Refusals whose problem type is a name of its own rather than `rejected-<reason>`. */
const REJECT_TYPE: Partial<Record<RejectReason, string>> = {
  placement_unsatisfiable: 'placement-unsatisfiable',
  maintenance_budget: 'maintenance-budget',
  unknown_plan: 'plan-not-found',
  plan_stale: 'plan-stale',
  plan_running: 'plan-running',
  plan_ended: 'plan-ended',
};

/** The stream-transfer errors as problem+json answers; put in front of the shared mappers. */
export const streamProblemMappers: readonly ProblemMapper[] = [
  (error) =>
    error instanceof NotOwnerError
      ? new HttpProblem({
          status: 409,
          type: 'not-owner',
          detail: error.message,
          // The hint a client follows: where to send the request, and the epoch it will meet.
          extra: {
            stream: error.stream,
            owner: error.owner,
            address: error.address ?? null,
            epoch: error.epoch,
            transferring: error.transferring,
          },
          cause: error,
        })
      : undefined,
  (error) =>
    error instanceof StreamNotFoundError
      ? new HttpProblem({ status: 404, type: 'stream-not-found', detail: error.message, extra: { stream: error.stream }, cause: error })
      : undefined,
  (error) =>
    error instanceof HandoffTimeoutError
      ? new HttpProblem({
          status: 503,
          type: 'handoff-in-progress',
          detail: error.message,
          extra: { stream: error.stream, waited_ms: error.waitedMs },
          headers: retryAfter(error.retryAfterSeconds),
          cause: error,
        })
      : undefined,
  (error) =>
    error instanceof StaleProducerSequenceError
      ? new HttpProblem({
          status: 409,
          type: 'stale-producer-sequence',
          detail: error.message,
          extra: { stream: error.stream, producer: error.producer, seq: error.seq, last_seq: error.lastSeq },
          cause: error,
        })
      : undefined,
  (error) =>
    error instanceof ProducerHeldError
      ? new HttpProblem({
          status: 403,
          type: 'producer-held',
          detail: error.message,
          extra: { stream: error.stream, producer: error.producer, principal: error.principal },
          cause: error,
        })
      : undefined,
  (error) =>
    error instanceof AppendUnavailableError || error instanceof NodeStoppedError
      ? new HttpProblem({ status: 503, type: 'append-unavailable', detail: error.message, headers: retryAfter(1), cause: error })
      : undefined,
  (error) =>
    error instanceof StreamFencedError
      ? new HttpProblem({
          status: 503,
          type: 'stream-fenced',
          detail: error.message,
          extra: { stream: error.stream, node: error.node },
          headers: retryAfter(1),
          cause: error,
        })
      : undefined,
  (error) =>
    error instanceof CommandRejectedError
      ? new HttpProblem({
          status: REJECT_STATUS[error.reason] ?? 409,
          type: REJECT_TYPE[error.reason] ?? `rejected-${error.reason.replaceAll('_', '-')}`,
          detail: error.message,
          // A failed precondition names what holds now (owner and epoch, or a node's streams);
          // a placement refusal names the streams it is about.
          extra: { reason: error.reason, ...error.current, ...(error.streams ? { unplaceable: [...error.streams] } : {}) },
          cause: error,
        })
      : undefined,
];
