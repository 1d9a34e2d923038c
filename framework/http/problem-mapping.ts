import { z } from 'zod';
import {
  StoreUnavailableError,
  InvalidIdentityError,
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
} from '@baton/contracts';
import { describeInvalidFields, invalidFields } from './invalid-fields.js';
import { HttpProblem, retryAfter } from './problem.js';

/**
 * Turns one kind of error into the HTTP answer it deserves, or returns undefined to let the
 * next mapper try. A variant puts its own mappers in front of the defaults when its API gives
 * a contract error a more specific meaning (seed 003 answers a reused key differently).
 */
export type ProblemMapper = (error: unknown) => HttpProblem | undefined;

const storeUnavailable: ProblemMapper = (error) =>
  error instanceof StoreUnavailableError
    ? new HttpProblem({
        status: 503,
        type: 'store-unavailable',
        detail: `${error.message}; nothing was guessed, retry later`,
        extra: { store: error.store },
        headers: retryAfter(1),
        cause: error,
      })
    : undefined;

const invalidIdentity: ProblemMapper = (error) =>
  error instanceof InvalidIdentityError
    ? new HttpProblem({
        status: 400,
        type: 'invalid-identity',
        detail: error.message,
        extra: { kind: error.kind, input: error.input, reason: error.reason },
        cause: error,
      })
    : undefined;

const invalidInput: ProblemMapper = (error) => {
  if (!(error instanceof z.core.$ZodError)) return undefined;
  const fields = invalidFields(error.issues);
  return new HttpProblem({
    status: 400,
    type: 'invalid-input',
    detail: `invalid input: ${describeInvalidFields(fields)}`,
    extra: { invalid_fields: fields },
    cause: error,
  });
};

/** Consensus could not take or answer the request right now: the client retries later. */
const consensusUnavailable: ProblemMapper = (error) => {
  if (error instanceof NotAppendedError && error.reason === 'key_reused') {
    return new HttpProblem({
      status: 422,
      type: 'idempotency-key-reused',
      detail: `${error.message}; use a fresh Idempotency-Key for a different request`,
      cause: error,
    });
  }
  if (error instanceof NotAppendedError && error.reason === 'invalid_command') {
    return new HttpProblem({ status: 400, type: 'invalid-command', detail: `${error.message}; nothing was changed`, cause: error });
  }
  if (error instanceof NotAppendedError) {
    return new HttpProblem({
      status: 503,
      type: 'not-appended',
      detail: `${error.message}; nothing was changed, retry later`,
      extra: { reason: error.reason },
      headers: retryAfter(1),
      cause: error,
    });
  }
  if (error instanceof OutcomeUnknownError) {
    return new HttpProblem({
      status: 503,
      type: 'outcome-unknown',
      detail: `${error.message}; retry with the same Idempotency-Key to learn the decision`,
      extra: { reason: error.reason },
      headers: retryAfter(1),
      cause: error,
    });
  }
  if (error instanceof ReadUnavailableError) {
    return new HttpProblem({
      status: 503,
      type: 'read-unavailable',
      detail: `${error.message}; retry later`,
      headers: retryAfter(1),
      cause: error,
    });
  }
  return undefined;
};

/**
 * Errors koa and its ecosystem raise with an HTTP status (`ctx.throw(400, ...)`, http-errors).
 * Only 4xx messages marked `expose` reach the client; a 5xx keeps its message in the log.
 */
const koaHttpError: ProblemMapper = (error) => {
  if (!(error instanceof Error)) return undefined;
  const { status, expose, headers } = error as Error & {
    status?: unknown;
    expose?: unknown;
    headers?: Record<string, string>;
  };
  if (typeof status !== 'number' || status < 400 || status > 599) return undefined;
  if (status >= 500) return undefined;
  return new HttpProblem({
    status,
    detail: expose === true ? error.message : 'the request was refused',
    headers,
    cause: error,
  });
};

/** The defaults, in order. Anything none of them claims is an unexpected 500. */
export const defaultProblemMappers: readonly ProblemMapper[] = Object.freeze([
  storeUnavailable,
  invalidIdentity,
  invalidInput,
  consensusUnavailable,
  koaHttpError,
]);

export function toProblem(error: unknown, mappers: readonly ProblemMapper[]): HttpProblem | undefined {
  if (error instanceof HttpProblem) return error;
  for (const map of mappers) {
    const problem = map(error);
    if (problem) return problem;
  }
  return undefined;
}
