import { ExitCode } from './exit-codes.js';

/**
 * An error the CLI reports to its user as one clear message (never a stack trace), with the
 * exit code scripts see. `code` is a stable machine-readable name, shown in `--json` output.
 */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: ExitCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The command line is wrong: what was given, and what is expected instead. */
export class UsageError extends CliError {
  constructor(message: string) {
    super('usage', message, ExitCode.Usage);
  }
}

/** The command ran and was refused or failed; the message says why and what to do. */
export class FailedError extends CliError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, ExitCode.Failed, options);
  }
}

/**
 * A server answered with an error status. Carries the status and the problem+json body, so a
 * command can turn a status it expects (a 504 of a transfer, a 409 of a cancel) into advice of
 * its own, and pass any other refusal through in the server's words.
 */
export class HttpRefusal extends FailedError {
  constructor(
    code: string,
    message: string,
    readonly status: number,
    readonly problem: Readonly<Record<string, unknown>>,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** A server could not be reached at `address` (refused, reset, no such host, timed out). */
export class UnreachableError extends CliError {
  constructor(
    readonly address: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super('unreachable', `cannot reach ${address}: ${reason}`, ExitCode.Unreachable, options);
  }
}

/**
 * A wait the command was given (its --timeout) ran out before the work was done: a handoff not
 * settled, a drain or rebalance unfinished, a transfer not committed. The work goes on in the
 * cluster and the message says how to follow it. One rule for every command: exit 3, as for a
 * server that gave no answer, so a script tells "refused" (1) from "not yet" (3).
 */
export class TimedOutError extends CliError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, ExitCode.Unreachable, options);
  }
}

/**
 * A server took the request but gave no answer within the wait. Unlike a connection that
 * cannot be made, the work asked for may well go on at the server, so the message says how to
 * follow it rather than that the server is down. Same exit code as unreachable: no answer.
 */
export class NoAnswerInTimeError extends TimedOutError {
  constructor(
    readonly address: string,
    readonly waitedMs: number,
    advice: string,
    options?: { cause?: unknown },
  ) {
    super('no_answer_in_time', `${address} gave no answer within ${waitedMs} ms${advice}`, options);
  }
}
