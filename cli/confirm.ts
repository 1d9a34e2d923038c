import { createInterface } from 'node:readline';
import { UsageError } from './cli-errors.js';
import type { CliContext } from './context.js';

/**
 * Asks a yes/no question on the terminal; only "y" or "yes" (any case) agrees. Input that ends
 * before an answer counts as no: nothing is done that was not agreed to.
 */
export async function confirm(ctx: CliContext, question: string): Promise<boolean> {
  ctx.stderr.write(`${question} [y/N] `);
  const lines = createInterface({ input: ctx.stdin, terminal: false, crlfDelay: Infinity });
  try {
    for await (const line of lines) return /^\s*y(es)?\s*$/i.test(line);
    return false;
  } finally {
    lines.close();
  }
}

/**
 * Whether a command that moves many streams may go ahead: at once with --yes; on a terminal
 * once the person says yes to `question`; without a terminal (a script, a pipe, cron) never by
 * itself: the command stops with a usage error (exit 2) naming --yes, so nothing moves unasked.
 */
export async function agreedToMove(
  ctx: CliContext,
  options: { yes?: boolean },
  what: string,
  question: string,
): Promise<boolean> {
  if (options.yes === true) return true;
  if (ctx.stdin.isTTY !== true) {
    throw new UsageError(`${what} moves many streams and stdin is not a terminal to ask on: give --yes to go ahead without asking`);
  }
  return confirm(ctx, question);
}
