import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join, relative, isAbsolute } from 'node:path';
import type { CliContext } from './context.js';

/**
 * How a person at `ctx.cwd` runs this CLI, so the commands it suggests work as typed:
 * `baton` when the PATH leads to this very CLI (after `npm link`); `npx baton` inside the
 * checkout (npm runs a project's own bin by name); otherwise node with the entry point's path.
 */
export function batonInvocation(ctx: Pick<CliContext, 'cwd' | 'env' | 'pkg'>): string {
  const main = join(ctx.pkg.cli, 'dist', 'main.js');
  if (pathLeadsTo(ctx.env.PATH ?? '', main)) return 'baton';
  const inside = ctx.pkg.checkout === undefined ? '..' : relative(ctx.pkg.checkout, ctx.cwd);
  if (!inside.startsWith('..') && !isAbsolute(inside)) return 'npx baton';
  return `node ${main}`;
}

/** True when the first `baton` on `path` is (a link to) `main`. */
function pathLeadsTo(path: string, main: string): boolean {
  let target: string;
  try {
    target = realpathSync(main);
  } catch {
    return false;
  }
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'baton');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    try {
      return realpathSync(candidate) === target;
    } catch {
      return false;
    }
  }
  return false;
}
