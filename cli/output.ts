import { BatonError } from '../framework/contracts/errors.js';
import { CliError, FailedError } from './cli-errors.js';

/** Where output goes; process.stdout/stderr in the command, string buffers in tests. */
export interface Sink {
  write(text: string): unknown;
  /** True on a terminal: progress is then drawn as a bar instead of one line per update. */
  isTTY?: boolean;
  columns?: number;
}

/**
 * How every command speaks. Humans get readable lines by default; with `--json` a script gets
 * exactly one JSON document on stdout per command (the result, or nothing on error) and errors
 * as one JSON document on stderr, so `baton ... --json | jq` never sees prose.
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: Sink = process.stdout,
    private readonly stderr: Sink = process.stderr,
  ) {}

  /** The command's result: `data` with --json, else the lines `human` renders from it. */
  result<T>(data: T, human: (data: T) => string | string[]): void {
    if (this.json) {
      this.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
      return;
    }
    const text = human(data);
    const lines = Array.isArray(text) ? text : [text];
    this.stdout.write(`${lines.join('\n')}\n`);
  }

  /** A remark for a person (progress, a hint): stderr, so it never mixes into --json results. */
  note(line: string): void {
    if (!this.json) this.stderr.write(`${line}\n`);
  }

  /** Reports a failure: one line for a person, or `{"error": {code, message}}` for a script. */
  error(error: CliError): void {
    if (this.json) {
      const body: Record<string, unknown> = {
        code: error.code,
        message: error.message,
        exitCode: error.exitCode,
      };
      this.stderr.write(`${JSON.stringify({ error: body })}\n`);
    } else {
      this.stderr.write(`baton: ${error.message}\n`);
    }
  }
}

/**
 * Any thrown value as a CliError. Baton's own errors keep their code and message (they already
 * say what was wrong and what to do); anything else is a defect, reported in one line with the
 * hint to rerun with BATON_DEBUG=1 for the stack.
 */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof BatonError)
    return new FailedError(error.code, error.message, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new FailedError(
    'internal',
    `unexpected error: ${message} (set BATON_DEBUG=1 to see where)`,
    { cause: error },
  );
}
