import { createInterface } from 'node:readline';
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
